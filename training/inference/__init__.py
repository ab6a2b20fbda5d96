"""Rollout-time generation with transformers: the local policy and its constrained decoding."""
