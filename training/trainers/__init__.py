"""TRL trainers (HiFPO GRPO, SFT for RFT/GRSD), their step datasets, run records and the accelerate entry point."""
