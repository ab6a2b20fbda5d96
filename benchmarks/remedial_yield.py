"""Remedial-data yield of corrective teaching (MobileWizard §3.4.4) on a stored run, read only:
`python benchmarks/remedial_yield.py STORAGE_ROOT [--experiment default] [--policy-version V]
[--screen 540x1200] [--world-seed 0] [--style elements] [--max-attempts N]`.

Reads the experiment's curriculum (`curriculum_tasks`) and its staged rollout attempts (so a run
whose rollouts are still going can be measured too), grafts every failed attempt with the
solver teacher, re-verifies with the programmatic critic, and prints one JSON object: failures
seen, repaired, verified, yield, failures by reason, kept and teacher steps, the training rows
they make (beside RFT's first-round rows from the run's own successes), seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402

from ops.data.attempt_store import ParquetAttemptStore, collect_tables  # noqa: E402
from ops.remedial.corrective_teaching import (ScriptedPolicy, TeachingReport, failed_attempts, remedial_tables,  # noqa: E402
                                     teach)
from ops.judging.critic.programmatic import ProgrammaticCritic  # noqa: E402
from ops.judging.critic.reasoning_annotation import ProgrammaticAnnotator  # noqa: E402
from ops.curriculum import task_specs  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from ops.samples.step_samples import with_hint_free_copies  # noqa: E402
from ops.remedial.solver_teacher import SolverTeacher  # noqa: E402
from training.trainers.step_datasets import rft_samples  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="storage root of the run (MOBILEFORGE_STORAGE_ROOT)")
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--policy-version", help="staged policy version directory (default: the only one)")
    parser.add_argument("--screen", default="540x1200", help="simulator screen WIDTHxHEIGHT of the run")
    parser.add_argument("--world-seed", type=int, default=0)
    parser.add_argument("--style", default="elements", help="the agent's prompt style")
    parser.add_argument("--max-attempts", type=int)
    args = parser.parse_args()

    staged = args.root / args.experiment / "_staging" / "rollouts"
    versions = [p.name for p in staged.iterdir() if p.is_dir()]
    version = args.policy_version or (versions[0] if len(versions) == 1 else None)
    if version is None:
        raise SystemExit(f"{staged} holds policy versions {versions}: name one with --policy-version")
    curriculum = pl.read_parquet(args.root / args.experiment / "curriculum_tasks" / "_" / "data.parquet")
    tasks = {t.task_id: t for t in task_specs(curriculum, False, None)}
    store = ParquetAttemptStore.from_uri(str(staged))
    attempts, steps, feedback = collect_tables(store, version, [tasks[t] for t in sorted(tasks)])
    width, height = (int(v) for v in args.screen.split("x"))

    start = time.perf_counter()
    report = TeachingReport()
    failed = failed_attempts(attempts, steps, feedback, tasks, report)[:args.max_attempts]
    voice = ScriptedPolicy(args.style)
    grafts = teach(failed, SolverTeacher(args.world_seed), lambda: SimEnvironment((width, height), args.world_seed),
                   voice, ProgrammaticCritic(args.world_seed), report,
                   writer=ProgrammaticAnnotator(args.world_seed) if voice.keeps_memory else None)
    seconds = time.perf_counter() - start
    remedial_attempts, remedial_steps = remedial_tables([g.record for g in grafts])
    rows = rft_samples(remedial_steps, remedial_attempts, verdict="critic_decision")
    successes = rft_samples(steps, attempts, verdict="critic_decision")
    kinds = Counter("template" if tasks[g.task_id].template_id else "other" for g in grafts)
    tried = Counter("template" if f.task.template_id else "other" for f in failed)
    print(json.dumps({
        "policy_version": version, "attempts": attempts.height, "tasks": attempts["task_id"].n_unique(),
        "failures_seen": report.failures_seen, "grafted": len(failed), "repaired": report.repaired,
        "verified": report.verified, "yield": round(report.yield_rate, 3),
        "failures_by_reason": dict(report.failures.most_common()),
        "verified_by_kind": dict(kinds), "grafted_by_kind": dict(tried),
        "mean_kept_steps": round(sum(g.kept_steps for g in grafts) / max(1, len(grafts)), 2),
        "mean_teacher_steps": round(sum(g.teacher_steps for g in grafts) / max(1, len(grafts)), 2),
        "remedial_rows": rows.height, "with_hint_free_copies": with_hint_free_copies(rows, remedial_attempts).height,
        "rft_round1_rows_from_successes": successes.height,
        "reasons_detail": [f"{g.task_id}#{g.attempt} {g.failure}: {g.detail}" for g in report.unrepaired[:15]],
        "seconds": round(seconds, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
