"""Corrective teaching (MobileWizard §3.4.4): failed attempts repaired by a teacher and re-verified."""
