"""AdaGRPO: online trajectory-level GRPO with SPA, AdaPR and FCF (MobileRL §2.2)."""
