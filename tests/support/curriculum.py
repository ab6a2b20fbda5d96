"""Curriculum rows for asset tests that stand in for the mined curriculum."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ops.curriculum.model import CurriculumTask
from phonesim.tasks import instantiate


def template_task_rows(templates: Sequence[str], seed: int = 0) -> list[dict[str, Any]]:
    """One `curriculum_tasks` row per simulator template, instantiated with `seed`, as the curriculum mines them."""
    rows = []
    for tid in templates:
        inst = instantiate(tid, seed)
        rows.append(CurriculumTask(task_id=inst.id, app=inst.apps[0], instruction=inst.instruction,
                                   step_budget=inst.step_budget, core_functionality=tid,
                                   variation_type="parameter_change", prerequisites=None, source_trace_id="t",
                                   verifiable=True, template_id=tid, template_seed=seed,
                                   template_params=dict(inst.params)).to_row())
    return rows
