"""The table `mobileforge run` prints after a run, from the stored `benchmark_results`."""

from __future__ import annotations

import polars as pl

from mobileforge.cli.run import print_benchmark
from ops.data.schemas import from_rows
from phonesim.tasks import templates


class _Stored:
    """Reads back one stored frame, as the IO manager's `load` does."""

    def __init__(self, frame: pl.DataFrame):
        self.frame = frame

    def load(self, key, address) -> pl.DataFrame:
        return self.frame


def _results(policies: list[str]) -> pl.DataFrame:
    template = templates(split="test")[0].id
    return from_rows([{
        "policy_id": policy, "task_id": f"{template}#0", "template_id": template, "difficulty": "L1", "seed": 0,
        "attempt": attempt, "success": policy == "rft" and attempt == 2, "progress": 0.5, "false_complete": False,
        "side_effects": 0, "overdue": False, "steps": 4, "first_app_right": True, "answer_seen": None, "judge": "simulator",
    } for policy in policies for attempt in (1, 2)], "benchmark_results")


def test_each_adapted_policy_is_paired_with_the_base(capsys):
    print_benchmark(_Stored(_results(["base", "rft"])), "default", 2)
    out = capsys.readouterr().out
    assert "Held-out benchmark (1 tasks, 2 attempts each)" in out and "Paired with the base" in out


def test_a_benchmark_of_the_base_alone_prints_no_empty_pairing(capsys):
    print_benchmark(_Stored(_results(["base"])), "default", 2)
    out = capsys.readouterr().out
    assert "Held-out benchmark" in out and "Paired with the base" not in out
