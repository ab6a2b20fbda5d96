"""Every table the pipeline stores: columns, dtypes, descriptions, and a validator.

One `TableSchema` per table; `validate(df, table)` lists what is wrong with a frame (missing or
extra columns, wrong dtypes, nulls in required columns, values outside an enum or a range,
unparseable JSON, broken row rules) and `empty(table)` builds a typed empty frame. Asset checks
(pipelines/checks.py) run `validate` on every stored frame. Field names follow MobileForge §2.2–2.3
and appendix G prompts 1–4, and the rollout records in ops/agent/episode.py.

Conventions: integers are Int64 and floats Float64 (so frames built from Python values need no
casts; `conform` casts narrower ints); nested structures (actions, a11y trees, element lists,
critic step analysis) are JSON text columns, checked for parseability; coordinates inside
them use the 0–1000 grid of ops.actions. Ground-truth columns (`gt_*`, benchmark outcomes)
come from the simulator's judge and are never shown to the policy or the critic.

Screenshots — decided by measurement (benchmarks/screenshot_storage.py; 2,000 rows of
1080×2400 phone-like PNGs drawn with a skewed choice from 120 distinct screens, 83 MiB of raw
PNG bytes; 2 shared, busy cores, so seconds are noisy and the ratios are what matter):

    layout                                   write s  read s  MiB on disk
    PNG bytes in column, pyarrow defaults      0.550   0.687   34.9
    PNG bytes in column, PARQUET_WRITE_OPTIONS 0.060   0.156    3.4
    content-addressed blob files + sha column  0.171   0.138    4.9

With little repetition (500 rows, 189 distinct screens) the blob store was the largest
(7.7 vs 5.3 MiB) and slowest to write (0.12 vs 0.07 s), and read faster (0.03 vs 0.14 s).
Decision: PNG bytes stay in a binary column (`*_png`, `image`), written with Parquet
dictionary encoding allowed to grow (`PARQUET_WRITE_OPTIONS`) so a screen repeated within a
row group is stored once. It is the smallest on disk and the fastest to write, and rows stay
self-contained: TRL/HF datasets and DuckDB read the bytes directly, with no dangling
references and one object per partition on S3. Blobs read faster, but not enough to pay for
one object per screen and a second lookup in every consumer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import polars as pl

from ops.actions import REASONING_PARTS
from ops.agent.reasoning_memory import StepOutcome

# Passed to pyarrow.parquet.write_table for every stored table: a dictionary page limit large
# enough that repeated PNGs in a row group are deduplicated (see the measurement above).
PARQUET_WRITE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "dictionary_pagesize_limit": 1 << 30,
}

JSON_TEXT = pl.String  # dtype of JSON-text columns (marked with `json=True`)


@dataclass(frozen=True)
class Column:
    name: str
    dtype: pl.DataType
    description: str
    required: bool = True  # no nulls allowed
    enum: tuple[Any, ...] | None = None  # allowed non-null values
    bounds: tuple[float, float | None] | None = None  # inclusive range of non-null values
    json: bool = False  # string column holding JSON text


@dataclass(frozen=True)
class TableSchema:
    name: str
    description: str
    columns: tuple[Column, ...]
    # Row rules: groups of columns of which exactly one must be non-null in every row, and groups
    # whose columns are all null or all non-null in every row.
    exactly_one_of: tuple[tuple[str, ...], ...] = field(default=())
    all_or_none: tuple[tuple[str, ...], ...] = field(default=())

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def polars_schema(self) -> pl.Schema:
        return pl.Schema({c.name: c.dtype for c in self.columns})

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name!r} has no column {name!r}")


def _c(name: str, dtype: pl.DataType, description: str, **kw: Any) -> Column:
    return Column(name, dtype, description, **kw)


_TASK = _c("task_id", pl.String, "curriculum/benchmark task id")
_ATTEMPT = _c("attempt", pl.Int64, "attempt index k within the task, 1-based", bounds=(1, None))
_STEP = _c("step", pl.Int64, "step index within the attempt/trace", bounds=(0, None))
_STRINGS = pl.List(pl.String)

VARIATION_TYPES = ("simplification", "parameter_change", "scenario_application",
                   "step_progression")  # MobileForge prompt 1
END_REASONS = ("terminated", "budget", "loop", "blocked_by_guard", "error")  # ops.agent.episode.AttemptRecord.end_reason
DIFFICULTIES = ("L1", "L2", "L3", "L4", "unrated")  # MobileGym §4.4 difficulty strata; a user's task may name none
STEP_OUTCOMES = tuple(outcome.value for outcome in StepOutcome)
_PART_MEANINGS = dict(zip(REASONING_PARTS, ("did the previous action work", "what the screen shows",
                                            "the sub-task now", "the exact action to take"), strict=True))
STEP_REASONING = tuple(
    _c(part, pl.String, f"structured reasoning (MobileWizard §3.3), {meaning}; null for other prompt styles and "
       "invalid outputs", required=False)
    for part, meaning in _PART_MEANINGS.items())
REASONING_TARGETS = tuple(
    _c(f"target_{part}", pl.String, f"annotated {part.replace('_', ' ')} of the step (MobileWizard App. C.1), "
       f"{meaning}: the reasoning reward's target; null when the step was not annotated", required=False)
    for part, meaning in _PART_MEANINGS.items())

EXPLORATION_TRANSITIONS = TableSchema(
    "exploration_transitions",
    "One explored transition (MobileForge §2.2.1): before/after screens, action, target, summary.",
    (
        _c("app", pl.String, "target app explored"),
        _c("trace_id", pl.String, "exploration search (one per goal) this transition belongs to"),
        _c("transition_id", pl.String, "unique id of the transition within the app"),
        _c("parent_id", pl.String, "transition this one continues from; null at the app's start",
           required=False),
        _STEP,
        _c("goal", pl.String, "function-aware exploration goal being pursued"),
        _c("before_screen_id", pl.String, "screen identity before the action"),
        _c("after_screen_id", pl.String, "screen identity after the action"),
        _c("before_screenshot_png", pl.Binary, "PNG screenshot before the action"),
        _c("after_screenshot_png", pl.Binary, "PNG screenshot after the action"),
        _c("before_a11y", JSON_TEXT, "accessibility tree before the action", json=True),
        _c("after_a11y", JSON_TEXT, "accessibility tree after the action", json=True),
        _c("action", JSON_TEXT, "canonical action {type, args} (ops.actions)", json=True),
        _c("target_element", JSON_TEXT, "element acted on, null for actions without one",
           required=False, json=True),
        _c("summary", pl.String, "one-line natural-language summary of the transition"),
    ),
)

CURRICULUM_TASKS = TableSchema(
    "curriculum_tasks",
    "Executable task x = (instruction, budget, core functionality, variation, prerequisites), "
    "MobileForge eq. 5, grounded in the exploration trace it came from.",
    (
        _TASK,
        _c("app", pl.String, "target app the task runs in"),
        _c("instruction", pl.String, "self-contained instruction ι"),
        _c("step_budget", pl.Int64, "estimated step budget B", bounds=(1, None)),
        _c("core_functionality", pl.String, "core functionality c being taught"),
        _c("variation_type", pl.String, "variation type v", enum=VARIATION_TYPES),
        _c("prerequisites", pl.String, "non-obvious prerequisites p", required=False),
        _c("source_trace_id", pl.String, "exploration trace the task is grounded in"),
        _c("verifiable", pl.Boolean, "a simulator judge can check the outcome"),
        _c("template_id", pl.String, "simulator task template when verifiable",
           required=False),
        _c("template_seed", pl.Int64, "seed that instantiates the template's parameters",
           required=False),
        _c("template_params", JSON_TEXT, "template parameters when verifiable",
           required=False, json=True),
        _c("goal_screen", pl.String, "screen whose reach is the judge of a navigation task",
           required=False),
        _c("goal_state", JSON_TEXT, "judge of a toggle or entry-action task: "
           "{screen, values: logical-state path -> value[, opens, taps]}", required=False, json=True),
    ),
)

ATTEMPTS = TableSchema(
    "attempts",
    "One rollout attempt of a task (MobileForge §2.3.1) with critic outcome and ground truth.",
    (
        _TASK,
        _ATTEMPT,
        _c("policy_version", pl.String, "policy/checkpoint that acted"),
        _c("hints_used", pl.List(pl.Int64),
           "attempts whose corrective hints were in the instruction (eq. 8); empty if none"),
        _c("end_reason", pl.String, "why the attempt ended", enum=END_REASONS),
        _c("error", pl.String, "error message when end_reason is error", required=False),
        _c("answer", pl.String, "the agent's answer, when it gave one", required=False),
        _c("n_steps", pl.Int64, "steps taken", bounds=(0, None)),
        _c("final_screenshot_png", pl.Binary, "PNG of the screen after the last action", required=False),
        _c("critic_decision", pl.Int64, "critic outcome z_k (1 success); null if no verdict",
           required=False, enum=(0, 1)),
        _c("judge", pl.String, "who gave critic_decision: a critic (programmatic: the simulator's judge; "
           "llm:<model>) or an environment judge (simulator, androidworld)", required=False),
        _c("gt_success", pl.Boolean, "ground truth: judge success (never shown to policy/critic)",
           required=False),
        _c("gt_progress", pl.Float64, "ground truth: fraction of goal checks passed",
           required=False, bounds=(0.0, 1.0)),
        _c("gt_side_effects", pl.Int64, "ground truth: unexpected state changes",
           required=False, bounds=(0, None)),
        _c("gt_false_complete", pl.Boolean, "ground truth: declared success without success",
           required=False),
        _c("gt_overdue", pl.Boolean, "ground truth: goal reached but kept acting",
           required=False),
    ),
)

STEPS = TableSchema(
    "steps",
    "One agent step of an attempt: what it saw, the prompt, what it said, what happened.",
    (
        _TASK,
        _ATTEMPT,
        _STEP,
        _c("app", pl.String, "foreground app"),
        _c("screen", pl.String, "screen identity"),
        _c("screenshot_png", pl.Binary, "PNG screenshot the policy saw"),
        _c("elements", JSON_TEXT, "flat element list; Action.element indexes into it",
           json=True),
        _c("a11y", JSON_TEXT, "accessibility tree", required=False, json=True),
        _c("prompt", pl.String, "exact prompt (JSON chat messages) the model saw"),
        _c("raw_output", pl.String, "raw model output"),
        _c("action", JSON_TEXT, "parsed canonical action; null when unparseable",
           required=False, json=True),
        _c("parse_error", pl.String, "why the output did not parse", required=False),
        _c("conclusion", pl.String, "step conclusion carried into later prompts"),
        _c("latency_s", pl.Float64, "policy latency in seconds", bounds=(0.0, None)),
        _c("env_ok", pl.Boolean, "the environment applied the action"),
        _c("env_reason", pl.String, "why the environment did not apply it", required=False),
        _c("state", JSON_TEXT, "environment snapshot before the step (simulator only)",
           required=False, json=True),
        *STEP_REASONING,
        _c("verified_outcome", pl.String, "what the step visibly did, as the structured-reasoning memory records "
           "it (ops.agent.step_outcome); null for other prompt styles and for an attempt's last step",
           required=False, enum=STEP_OUTCOMES),
    ),
    exactly_one_of=(("action", "parse_error"),),
    all_or_none=(REASONING_PARTS,),
)

CRITIC_FEEDBACK = TableSchema(
    "critic_feedback",
    "Hierarchical feedback F_k = (z_k, step labels, hint), MobileForge eq. 6–7, prompts 2–4.",
    (
        _TASK,
        _ATTEMPT,
        _c("critic", pl.String, "which critic produced the feedback"),
        _c("decision", pl.Int64, "outcome z_k: 1 completed, 0 failed", enum=(0, 1)),
        _c("reason", pl.String, "explanation of the final judgment"),
        _c("failure_step", pl.Int64, "step where the attempt failed", required=False),
        _c("task_feasible", pl.Boolean, "whether the task itself is feasible"),
        _c("step_descriptions", _STRINGS, "per-step action/UI descriptions (prompt 2)"),
        _c("step_analysis", JSON_TEXT,
           "list of {step, reasonable, rationale}: process labels l_k^t (eq. 7)", json=True),
        _c("key_mistake", pl.String, "hint: main mistake (prompt 4)", required=False),
        _c("what_to_avoid", _STRINGS, "hint: what to avoid; empty without hint"),
        _c("suggested_approach", _STRINGS, "hint: alternatives; empty without hint"),
        _c("important_insights", _STRINGS, "hint: task insights; empty without hint"),
        _c("hint_summary", pl.String, "hint: brief self-reminder; null without hint",
           required=False),
    ),
)

TRAINING_SAMPLES = TableSchema(
    "training_samples",
    "Selected reasonable step (MobileForge eq. 14) rendered as a hint-contextualized prompt.",
    (
        _c("prompt", pl.String, "hint-contextualized prompt s̃_j (eq. 15)"),
        _c("image", pl.Binary, "PNG screenshot of the step"),
        _c("target_action", JSON_TEXT, "target canonical action a*_j", json=True),
        _c("target_response", pl.String, "raw model output of the step: the SFT target"),
        _c("target_box", JSON_TEXT, "target element box [x0,y0,x1,y1] on the 0–1000 grid",
           required=False, json=True),
        _c("elements", JSON_TEXT, "element list of the observation", required=False,
           json=True),
        _TASK,
        _ATTEMPT,
        _STEP,
        _c("has_hint", pl.Boolean, "the prompt carries a corrective hint context"),
        _c("verified_outcome", pl.String, "what the step's action visibly did in the rollout (the `steps` column; "
           "the memory of later prompts shows it); null when the target was not the executed action (a finish "
           "step, a GRSD teacher's action), for other prompt styles and for an attempt's last step",
           required=False, enum=STEP_OUTCOMES),
        *REASONING_TARGETS,
    ),
    all_or_none=(tuple(c.name for c in REASONING_TARGETS),),
)

BENCHMARK_RESULTS = TableSchema(
    "benchmark_results",
    "One evaluation episode on a held-out task (Pass@k, MobileGym §4.3 diagnostics).",
    (
        _c("policy_id", pl.String, "checkpoint or policy evaluated"),
        _TASK,
        _c("template_id", pl.String, "simulator task template"),
        _c("difficulty", pl.String, "difficulty stratum", enum=DIFFICULTIES),
        _c("seed", pl.Int64, "template parameter seed"),
        _c("attempt", pl.Int64, "attempt k for Pass@k, 1-based", bounds=(1, None)),
        _c("success", pl.Boolean, "the judge's verdict"),
        _c("judge", pl.String, "which judge gave it: simulator, androidworld, or the critic (llm:<model>) on "
           "a device", required=False),
        _c("progress", pl.Float64, "fraction of goal checks passed; null where the judge has no goal checks "
           "(the critic)", bounds=(0.0, 1.0), required=False),
        _c("false_complete", pl.Boolean, "declared success without success"),
        _c("side_effects", pl.Int64, "unexpected state changes; null where the judge cannot see them (the critic)",
           bounds=(0, None), required=False),
        _c("overdue", pl.Boolean, "goal reached but kept acting until truncation; null where the judge cannot "
           "tell (the critic)", required=False),
        _c("steps", pl.Int64, "steps taken", bounds=(0, None)),
        _c("first_app_right", pl.Boolean, "the first action opened the app a shortest solution opens first"),
        _c("answer_seen", pl.Boolean, "answer task: one of its evidence texts (the gold, or what shows it) was on a "
           "screen of the episode (a substring test); null for operate tasks and suites without evidence",
           required=False),
    ),
)

FORK_PAIRS = TableSchema(
    "fork_pairs",
    "Fork point between a successful and a failed attempt of one task (UI-Voyager Alg. 1).",
    (
        _TASK,
        _c("success_attempt", pl.Int64, "successful attempt index", bounds=(1, None)),
        _c("failed_attempt", pl.Int64, "failed attempt index", bounds=(1, None)),
        _c("success_step", pl.Int64, "fork step in the successful attempt", bounds=(0, None)),
        _c("failed_step", pl.Int64, "fork step in the failed attempt", bounds=(0, None)),
        _c("similarity", pl.Float64, "screenshot similarity at the fork", bounds=(0.0, 1.0)),
        _c("teacher_response", pl.String,
           "successful attempt's output at the fork: the SFT target for the failed context"),
    ),
)

TABLES: dict[str, TableSchema] = {
    t.name: t
    for t in (EXPLORATION_TRANSITIONS, CURRICULUM_TASKS, ATTEMPTS, STEPS, CRITIC_FEEDBACK,
              TRAINING_SAMPLES, BENCHMARK_RESULTS, FORK_PAIRS)
}


def get_table(table: str | TableSchema) -> TableSchema:
    """The schema named `table` (or `table` itself); KeyError lists the known names."""
    if isinstance(table, TableSchema):
        return table
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known: {sorted(TABLES)}") from None


def empty(table: str | TableSchema) -> pl.DataFrame:
    """A typed empty frame of `table`."""
    return pl.DataFrame(schema=get_table(table).polars_schema())


def from_rows(rows: Iterable[Mapping[str, Any]], table: str | TableSchema) -> pl.DataFrame:
    """Build a typed frame from dict rows; each row must have exactly the table's columns."""
    schema = get_table(table)
    expected = set(schema.column_names)
    rows = list(rows)
    for i, row in enumerate(rows):
        if set(row) != expected:
            missing, extra = sorted(expected - set(row)), sorted(set(row) - expected)
            raise ValueError(f"{schema.name} row {i}: missing {missing}, unexpected {extra}")
    return pl.DataFrame(rows, schema=schema.polars_schema())


def conform(df: pl.DataFrame, table: str | TableSchema) -> pl.DataFrame:
    """Select the table's columns in order and cast to its dtypes (strict: bad casts raise)."""
    schema = get_table(table)
    missing = [c for c in schema.column_names if c not in df.columns]
    if missing:
        raise ValueError(f"{schema.name}: missing columns {missing}")
    return df.select(pl.col(c.name).cast(c.dtype, strict=True) for c in schema.columns)


def with_optional_columns(df: pl.DataFrame, table: str | TableSchema) -> pl.DataFrame:
    """`df` with every optional (nullable) column of `table` it lacks added as nulls, in the table's
    column order: how a file written before such a column existed reads (extra columns are kept at
    the end, for `validate` to report)."""
    schema = get_table(table)
    missing = [pl.lit(None, c.dtype).alias(c.name) for c in schema.columns if not c.required and c.name not in df.columns]
    if not missing:
        return df
    df = df.with_columns(missing)
    known = [c for c in schema.column_names if c in df.columns]
    return df.select(known + [c for c in df.columns if c not in known])


def _json_problems(series: pl.Series) -> str | None:
    bad, first = 0, None
    for i, value in enumerate(series):
        if value is None:
            continue
        try:
            json.loads(value)
        except (TypeError, ValueError):
            bad += 1
            first = i if first is None else first
    return f"{bad} value(s) are not valid JSON (first at row {first})" if bad else None


def _column_problems(col: Column, series: pl.Series) -> list[str]:
    out = []
    if series.dtype != col.dtype:
        return [f"column {col.name!r}: dtype {series.dtype}, expected {col.dtype}"]
    nulls = series.null_count()
    if col.required and nulls:
        out.append(f"column {col.name!r}: {nulls} null(s) in a required column")
    values = series.drop_nulls()
    if col.enum is not None:
        bad = values.filter(~values.is_in(list(col.enum)))
        if len(bad):
            shown = sorted(set(bad.to_list()), key=str)[:5]
            out.append(f"column {col.name!r}: {len(bad)} value(s) outside {list(col.enum)}: "
                       f"{shown}")
    if col.bounds is not None:
        lo, hi = col.bounds
        outside = (values < lo) if hi is None else (values < lo) | (values > hi)
        n_bad = int(outside.sum())
        if n_bad:
            upper = "∞" if hi is None else f"{hi:g}"
            out.append(f"column {col.name!r}: {n_bad} value(s) outside [{lo:g}, {upper}]")
    if col.json:
        problem = _json_problems(series)
        if problem:
            out.append(f"column {col.name!r}: {problem}")
    return out


def validate(df: pl.DataFrame, table: str | TableSchema) -> list[str]:
    """Everything wrong with `df` as a `table` frame; an empty list means valid."""
    schema = get_table(table)
    problems = [f"missing column {name!r}" for name in schema.column_names
                if name not in df.columns]
    problems += [f"unexpected column {name!r}" for name in df.columns
                 if name not in schema.column_names]
    for col in schema.columns:
        if col.name in df.columns:
            problems += _column_problems(col, df.get_column(col.name))
    for group in schema.exactly_one_of:
        if all(name in df.columns for name in group):
            set_count = pl.sum_horizontal(pl.col(n).is_not_null().cast(pl.Int64) for n in group)
            n_bad = df.select((set_count != 1).sum()).item()
            if n_bad:
                problems.append(f"{n_bad} row(s) do not have exactly one of {list(group)} set")
    for group in schema.all_or_none:
        if all(name in df.columns for name in group):
            set_count = pl.sum_horizontal(pl.col(n).is_not_null().cast(pl.Int64) for n in group)
            n_bad = df.select(((set_count != 0) & (set_count != len(group))).sum()).item()
            if n_bad:
                problems.append(f"{n_bad} row(s) have some but not all of {list(group)} set")
    return problems
