"""HiFPO: step-level GRPO with the adaptive GUI action reward (MobileForge §2.3.4), with MobileWizard's history self-alignment as an option."""
