"""Hierarchical critic (MobileForge §2.2.3, prompts 2–4): programmatic and LLM implementations."""
