"""Benchmarking a policy: Pass@k and behaviour metrics, the evaluation loop, AndroidWorld's suite, charts and costs."""
