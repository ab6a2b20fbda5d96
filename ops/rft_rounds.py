"""Task selection for rejection fine-tuning rounds after the first (seed 003 §3.2: each round
runs the previous round's policy on new task variants)."""

from __future__ import annotations

from dataclasses import replace
from typing import Collection, Sequence

from ops.episode import TaskSpec


def fresh_variants(pool: Sequence[TaskSpec], solved_templates: Collection[str], round_index: int,
                   seed_offset: int, max_tasks: int | None) -> list[TaskSpec]:
    """New variants of `pool`'s template tasks for round `round_index`: templates in
    `solved_templates` first (the policy solved them last round, so verified successes are
    likely), then the others in pool order; at most `max_tasks`. Navigation tasks have no
    variants and are left out."""
    templated = [t for t in pool if t.template_id]
    ordered = ([t for t in templated if t.template_id in solved_templates]
               + [t for t in templated if t.template_id not in solved_templates])
    chosen = ordered if max_tasks is None else ordered[:max_tasks]
    return [replace(t, task_id=f"{t.task_id}~r{round_index}", seed=t.seed + round_index * seed_offset)
            for t in chosen]


def solved_templates(tasks: Sequence[TaskSpec], succeeded: Collection[str]) -> set[str]:
    """Templates of the tasks in `tasks` whose id is in `succeeded`."""
    return {t.template_id for t in tasks if t.template_id and t.task_id in succeeded}
