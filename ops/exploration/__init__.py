"""Function-aware exploration of a target app (MobileForge §2.2.1) and its goal generation."""
