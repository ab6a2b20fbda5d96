"""Verdicts and rewards: the hierarchical critic (MobileForge §2.3.1-2.3.2), the GUI action reward and MobileWizard's reasoning rewards."""
