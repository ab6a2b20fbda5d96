"""ops.data.schemas: every table builds empty, and `validate` names each kind of problem."""

import json

import polars as pl
import pytest

from ops.data.schemas import TABLES, conform, empty, from_rows, validate


def _step(**overrides):
    row = {
        "task_id": "t1", "attempt": 1, "step": 0, "app": "notes", "screen": "home",
        "screenshot_png": b"\x89PNG", "elements": "[]", "a11y": None, "prompt": "p",
        "raw_output": "o", "action": json.dumps({"type": "wait", "args": {}}),
        "parse_error": None, "conclusion": "c", "latency_s": 0.1, "env_ok": True,
        "env_reason": None, "state": None, "self_verification": None, "screen_analysis": None, "planning": None,
        "action_guidance": None, "verified_outcome": None,
    }
    return {**row, **overrides}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_table_has_a_valid_empty_frame_and_described_columns(table):
    assert validate(empty(table), table) == []
    assert all(c.description for c in TABLES[table].columns)


def test_a_valid_frame_has_no_problems():
    assert validate(from_rows([_step(), _step(step=1)], "steps"), "steps") == []


@pytest.mark.parametrize("mutate, expected", [
    (lambda df: df.drop("prompt"), "missing column 'prompt'"),
    (lambda df: df.with_columns(extra=pl.lit(1)), "unexpected column 'extra'"),
    (lambda df: df.with_columns(pl.col("step").cast(pl.Int32)),
     "column 'step': dtype Int32, expected Int64"),
    (lambda df: df.with_columns(prompt=pl.lit(None, pl.String)),
     "column 'prompt': 2 null(s) in a required column"),
    (lambda df: df.with_columns(attempt=pl.lit(0, pl.Int64)),
     "column 'attempt': 2 value(s) outside [1, ∞]"),
    (lambda df: df.with_columns(elements=pl.lit("{not json")),
     "column 'elements': 2 value(s) are not valid JSON (first at row 0)"),
    (lambda df: df.with_columns(parse_error=pl.lit("bad")),
     "2 row(s) do not have exactly one of ['action', 'parse_error'] set"),
    (lambda df: df.with_columns(planning=pl.lit("open the display settings")),
     "2 row(s) have some but not all of ['self_verification', 'screen_analysis', 'planning', 'action_guidance'] set"),
    (lambda df: df.with_columns(verified_outcome=pl.lit("maybe")),
     "column 'verified_outcome': 2 value(s) outside ['success', 'failure', 'unverified']: ['maybe']"),
])
def test_validate_names_each_problem(mutate, expected):
    frame = from_rows([_step(), _step(step=1)], "steps")
    assert validate(mutate(frame), "steps") == [expected]


def test_enum_values_are_checked():
    row = {"policy_id": "p", "task_id": "t", "template_id": "x", "difficulty": "L9", "seed": 1,
           "attempt": 1, "success": True, "progress": 1.0, "false_complete": False,
           "side_effects": 0, "overdue": False, "steps": 3, "first_app_right": True,
           "answer_seen": None, "judge": "simulator"}
    problems = validate(from_rows([row], "benchmark_results"), "benchmark_results")
    assert problems == ["column 'difficulty': 1 value(s) outside ['L1', 'L2', 'L3', 'L4', 'unrated']: "
                        "['L9']"]


def test_from_rows_rejects_rows_with_wrong_keys():
    with pytest.raises(ValueError, match=r"steps row 0: missing \['prompt'\], unexpected \[\]"):
        from_rows([{k: v for k, v in _step().items() if k != "prompt"}], "steps")


def test_conform_casts_and_orders_columns():
    frame = from_rows([_step()], "steps").with_columns(pl.col("step").cast(pl.Int32))
    shuffled = frame.select(reversed(frame.columns))
    fixed = conform(shuffled, "steps")
    assert fixed.columns == TABLES["steps"].column_names
    assert validate(fixed, "steps") == []


def test_unknown_table_lists_known_names():
    with pytest.raises(KeyError, match="known: .*curriculum_tasks"):
        empty("nope")
