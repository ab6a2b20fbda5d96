"""Training samples from judged rollouts: the HiFPO task and step filter (MobileForge eq. 10-14) and step samples."""
