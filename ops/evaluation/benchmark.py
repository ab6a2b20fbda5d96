"""Pass@k and diagnostics over benchmark episodes (MobileForge tables 1–3, MobileGym §4.3)."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING

import polars as pl

from ops.curriculum.model import MINED_SEEDS, canonical_params
from ops.agent.episode import TaskSpec

if TYPE_CHECKING:
    from phonesim.tasks import TaskInstance

# The simulator's held-out tasks are built only where the environment is the simulator: its modules
# are imported in the functions that build them, so a run on devices never loads them.
# Held out from every stage: the test templates (the curriculum's apps, functions it never mines)
# and the out-of-domain ones (cross-app hand-offs, functions unlike any train template).
HELD_OUT_SPLITS = ("test", "ood")
# benchmark_results column: an answer episode showed its evidence (null for operate tasks)
GROUNDED = "answer_seen"
USER_SPLIT = "user"  # the split of a user's own task file
# How many seeds per requested instance a template's distinct instances are drawn from.
DISTINCT_SCAN = 20


def held_out_tasks(seeds_per_template: int, max_templates: int | None = None, world_seed: int = 0,
                   first_seed: int = 0, splits: tuple[str, ...] = HELD_OUT_SPLITS) -> list[tuple[TaskSpec, str]]:
    """Held-out template instances (each split's, `max_templates` per split) as (task, difficulty
    stratum L1–L4); never seen in training."""
    return [task for split in splits
            for task in template_tasks(split, seeds_per_template, max_templates, world_seed, first_seed)]


def template_tasks(split: str, seeds_per_template: int, max_templates: int | None = None,
                   world_seed: int = 0, first_seed: int = 0) -> list[tuple[TaskSpec, str]]:
    """Up to `seeds_per_template` distinct instances of each of one split's templates, as (task,
    difficulty stratum L1–L4): seeds first_seed, first_seed + 1, ... in order, skipping a seed whose
    instance repeats an earlier one (a small parameter space draws the same task again, which would
    count one task several times). A template with fewer distinct instances among the first
    `DISTINCT_SCAN` × `seeds_per_template` seeds gives fewer (`instances_per_template` shows it)."""
    from ops.environments.simulator import template_task_spec
    from phonesim.tasks import instantiate, templates

    out = []
    for tmpl in templates(split=split)[:max_templates]:
        seen: set[str] = set()
        for seed in range(first_seed, first_seed + DISTINCT_SCAN * seeds_per_template):
            inst = instantiate(tmpl.id, seed, world_seed)
            key = inst.key  # a digest of the whole initial state: computed once
            if key in seen:
                continue
            seen.add(key)
            out.append((template_task_spec(inst), f"L{inst.difficulty}"))
            if len(seen) == seeds_per_template:
                break
    return out


def instances_per_template(tasks: list[TaskSpec]) -> dict[str, int]:
    """How many tasks each template contributes (a template short of the seeds asked for has
    fewer distinct instances)."""
    return dict(Counter(task.template_id for task in tasks))


def unseen_train_tasks(seeds_per_template: int, first_seed: int, max_templates: int | None = None,
                       world_seed: int = 0) -> list[tuple[TaskSpec, str]]:
    """Train-split template instances at seeds from `first_seed` (>= MINED_SEEDS) whose parameters
    differ from those of every instance the curriculum can mine: the curriculum's task families
    at instances it never saw. Templates with few parameter values give fewer, or none."""
    if first_seed < MINED_SEEDS:
        raise ValueError(f"first_seed: {first_seed} is below {MINED_SEEDS}, among the seeds the curriculum mines")
    from phonesim.tasks import instantiate, templates

    tasks = template_tasks("train", seeds_per_template, max_templates, world_seed, first_seed)
    mined = {(t.id, canonical_params(instantiate(t.id, seed, world_seed).params))
             for t in templates(split="train")[:max_templates] for seed in range(MINED_SEEDS)}
    unseen = [(t, d) for t, d in tasks
              if (t.template_id, canonical_params(instantiate(t.template_id, t.seed, world_seed).params)) not in mined]
    if not unseen:
        raise ValueError("unseen_train_tasks: every instance repeats a mined one")
    return unseen


def first_apps(tasks: list[TaskSpec], world_seed: int = 0, known: MutableMapping[str, str] | None = None
               ) -> dict[str, tuple[TaskInstance, str]]:
    """Per task: its instance and the app a shortest solution's first action opens (one cold solver
    search per task, up to seconds each: compute once and reuse for every checkpoint). `known` maps
    `first_app_key` to the app for instances already searched by this simulator (`phonesim.source.
    source_digest`); searched ones are added to it."""
    from phonesim.solver import solve
    from phonesim.tasks import instantiate

    known = {} if known is None else known
    expected = {}
    for task in tasks:
        inst = instantiate(task.template_id, task.seed, world_seed)
        key = first_app_key(inst, world_seed)
        if key not in known:
            phone = inst.make_phone()
            phone.step(solve(phone, inst)[0])
            known[key] = phone.current_app
        expected[task.task_id] = (inst, known[key])
    return expected


def first_app_key(instance: TaskInstance, world_seed: int) -> str:
    """What a task's first app depends on besides the simulator: its instance and the world."""
    return f"{world_seed}:{instance.key}"


def first_app_right(expected: dict[str, tuple[TaskInstance, str]], steps: pl.DataFrame) -> dict[tuple[str, int], bool]:
    """Per (task_id, attempt): did the attempt's first action land in the app that a shortest
    solution's first action opens (`expected`, from `first_apps`)? Every template task starts at
    the launcher, so this is the app choice, the first thing adaptation to target apps should
    teach (and rarely named by the instruction). `steps` is the rollout step table (task_id,
    attempt, step, action)."""
    from ops.actions import Action
    out = {}
    for r in steps.filter(pl.col("step") == 0).iter_rows(named=True):
        inst, app = expected[r["task_id"]]
        phone = inst.make_phone()
        if r["action"]:
            phone.step(Action.from_dict(json.loads(r["action"])))
        out[(r["task_id"], r["attempt"])] = phone.current_app == app
    return out


def answers_seen(expected: dict[str, tuple[TaskInstance, str]], steps: pl.DataFrame) -> dict[tuple[str, int], bool]:
    """Per (task_id, attempt) of an answer task: did one of the task's evidence texts (the gold, or
    what shows it, `TaskInstance.evidence`) appear on any screen of the attempt? A success without
    it answered without having seen the answer: a guess (a memorized "5" to a count question).
    Operate tasks are absent. `expected` is `first_apps` of the tasks."""
    shown: dict[tuple[str, int], bool] = {}
    for r in steps.select("task_id", "attempt", "elements").iter_rows(named=True):
        inst = expected[r["task_id"]][0]
        key = (r["task_id"], r["attempt"])
        if inst.answer_spec is None or shown.get(key):
            continue
        shown[key] = inst.evidence_shown(json.loads(r["elements"]) if r["elements"] else [])
    return shown


def pass_at_k(results: pl.DataFrame, k_max: int) -> pl.DataFrame:
    """Per policy (and difficulty): Pass@1..k_max — a task passes @k if any of its first k attempts succeeded —
    plus mean progress, false-complete, side-effect and overdue rates over all episodes (and the
    first-app-right rate when `results` has that column). With an `answer_seen` column, also
    grounded@k_max: Pass@k_max where an answer task's success counts only if the episode saw its
    evidence (`answers_seen`), so a gain made of guesses shows as a gap between the two."""
    passes = [(pl.col("success") & (pl.col("attempt") <= k)).any().alias(f"pass@{k}") for k in range(1, k_max + 1)]
    grounded = GROUNDED in results.columns
    if grounded:  # Pass@k_max counting only successes that saw their answer (a guess is not a pass)
        passes.append((pl.col("success") & pl.col(GROUNDED).fill_null(True)).any().alias(f"grounded@{k_max}"))
    per_task = results.filter(pl.col("attempt") <= k_max).group_by("policy_id", "difficulty", "task_id").agg(*passes)
    pass_cols = [f"pass@{k}" for k in range(1, k_max + 1)] + ([f"grounded@{k_max}"] if grounded else [])
    rate_exprs = [pl.col("progress").mean(), pl.col("false_complete").mean(),
                  (pl.col("side_effects") > 0).mean().alias("side_effects"), pl.col("overdue").mean(),
                  pl.col("steps").mean().alias("mean_steps")]
    if "first_app_right" in results.columns:
        rate_exprs.append(pl.col("first_app_right").mean())
    rates = results.group_by("policy_id", "difficulty").agg(*rate_exprs)
    by_difficulty = per_task.group_by("policy_id", "difficulty").agg(
        pl.len().alias("tasks"), *[pl.col(c).mean() for c in pass_cols]
    ).join(rates, on=["policy_id", "difficulty"])
    overall_rates = results.group_by("policy_id").agg(*rate_exprs)
    overall = per_task.group_by("policy_id").agg(
        pl.len().alias("tasks"), *[pl.col(c).mean() for c in pass_cols]
    ).join(overall_rates, on="policy_id").with_columns(pl.lit("all").alias("difficulty"))
    return pl.concat([overall.select(by_difficulty.columns), by_difficulty]).sort("policy_id", "difficulty")


def pass_at_k_by_split(results: pl.DataFrame, k_max: int, split_of: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Per policy and template split (test, ood, train; a user's task file: user), side by side: tasks and
    Pass@1..k_max (and grounded@k_max when `results` has `answer_seen`) over all difficulties (the `pass_at_k`
    overall row of each split's episodes). `split_of`: template -> split; None reads the simulator's."""
    if split_of is None:
        from phonesim.tasks import all_templates

        split_of = {t.id: t.split for t in all_templates().values()}
    tagged = results.with_columns(pl.col("template_id").replace_strict(dict(split_of), default=USER_SPLIT,
                                                                       return_dtype=pl.String).alias("split"))
    frames = [pass_at_k(tagged.filter(pl.col("split") == split), k_max).filter(pl.col("difficulty") == "all")
              .select("policy_id", pl.lit(split).alias("split"), "tasks", pl.col("^(pass|grounded)@.*$"))
              for split in sorted(tagged["split"].unique().to_list())]
    return pl.concat(frames).sort("policy_id", "split")


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (sensible at 0 and n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # the interval always holds p; at p = 0 or 1 rounding can put a bound a hair past it
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def sign_test_p(gained: int, lost: int) -> float:
    """Two-sided exact sign test (McNemar's exact test) on the discordant tasks: the chance of a
    split at least this uneven if either policy were equally likely to be the one that passes."""
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(gained, lost) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def passed_by_task(results: pl.DataFrame, k: int) -> pl.DataFrame:
    """Per policy and task: `passed`, whether any of its first k attempts succeeded (Pass@k of one task)."""
    return results.group_by("policy_id", "task_id").agg(
        ((pl.col("success") & (pl.col("attempt") <= k)).any()).alias("passed"))


def versus_baseline(results: pl.DataFrame, k: int, baseline: str = "base") -> pl.DataFrame:
    """Per policy, paired with `baseline` task by task at Pass@k: tasks passed, its 95% Wilson
    interval, tasks only the policy passes (gained) or only the baseline passes (lost), and the
    sign test's p-value on those. Both must have run the same tasks."""
    passed = passed_by_task(results, k)
    base = passed.filter(pl.col("policy_id") == baseline).select("task_id", pl.col("passed").alias("base_passed"))
    if base.is_empty():
        raise ValueError(f"versus_baseline: no episodes of baseline policy {baseline!r}")
    rows = []
    for policy in sorted(passed["policy_id"].unique().to_list()):
        paired = passed.filter(pl.col("policy_id") == policy).join(base, on="task_id", how="full", coalesce=True)
        if paired["passed"].is_null().any() or paired["base_passed"].is_null().any():
            raise ValueError(f"versus_baseline: {policy!r} and {baseline!r} ran different tasks")
        n, solved = paired.height, int(paired["passed"].sum())
        gained = int((paired["passed"] & ~paired["base_passed"]).sum())
        lost = int((~paired["passed"] & paired["base_passed"]).sum())
        low, high = wilson_interval(solved, n)
        rows.append({"policy_id": policy, "tasks": n, "passed": solved, f"pass@{k}": solved / n,
                     "ci_low": low, "ci_high": high, "gained": gained, "lost": lost,
                     "p_value": sign_test_p(gained, lost)})
    return pl.DataFrame(rows)
