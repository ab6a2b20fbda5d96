"""Model builders: the tiny Qwen2-VL-architecture policy built offline."""
