"""The rollout engine: K hint-guided attempts per task (MobileForge §2.3.1), and the progress of long loops."""
