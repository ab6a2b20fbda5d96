"""RFT: iterative rejection fine-tuning on verified-successful trajectories (UI-Voyager §3.2)."""
