"""GRSD: fork-point detection and self-distillation (UI-Voyager §3.3, Alg. 1)."""
