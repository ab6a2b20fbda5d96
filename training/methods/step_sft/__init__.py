"""MobileForge's training-objective ablation (Table 4): supervised fine-tuning on the same filtered step
data HiFPO trains on, with the hint context (hint SFT) and without it (no-hint SFT)."""
