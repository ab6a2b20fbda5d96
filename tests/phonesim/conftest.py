"""Shared fixtures: one A* solution per template, computed once per test session."""

from __future__ import annotations

from functools import lru_cache

from phonesim import instantiate, shortest_path


@lru_cache(maxsize=None)
def solved(template_id: str, seed: int = 1):
    """(task, solution actions) for a template instance; the solution is found by A*."""
    task = instantiate(template_id, seed)
    path = shortest_path(task.make_phone(), task)
    assert path is not None, f"{template_id}: A* found no solution"
    return task, tuple(path)
