"""Task-level figures of one or more local checkpoints on the simulator's template tasks:
`python benchmarks/policy_tasks.py CKPT [CKPT ...] [--split test] [--k 3] [--seeds 1]
[--first-seed 0]`. `--split train --first-seed 500` measures the curriculum's own templates at
instances it never mined (`ops.evaluation.benchmark.unseen_train_tasks`); `--split pretrain` the
templates of the pretraining world's held-out apps (`phonesim.pretrain.HELD_OUT_APPS`), which no
pretraining recipe trains on.

Runs the same evaluation (`ops.evaluation.evaluate.evaluate_policy`) and Pass@k table as the
`benchmark_results` asset (no Dagster, attempts staged in a temporary directory) and adds behaviour diagnostics the table
does not show: how attempts end (terminate / budget / loop), invalid outputs, the first action
at the launcher, where every task starts, and how often that first action opens the right app.
Prints one JSON object per checkpoint and, given several, the paired comparison of each with
the first (`ops.evaluation.benchmark.versus_baseline`).
`--first-step-done` starts every task after a shortest solution's first action (the right app
open), to tell the app choice apart from what a policy does inside the app. `--constrain-echo`
decodes with the row-echo constraint (`training.inference.echo_constraint`). `--threads` (default 1)
sets torch's CPU threads: two evaluations side by side on 2 cores with torch's default threads
oversubscribe the cores (measured: no checkpoint done after 20 min; with one thread each, 585
episodes in ~130-140 s per checkpoint).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402
import torch  # noqa: E402
from pyarrow import fs as pafs  # noqa: E402

from ops.data.attempt_store import ParquetAttemptStore  # noqa: E402
from ops.evaluation.benchmark import first_apps, held_out_tasks, pass_at_k, unseen_train_tasks, versus_baseline  # noqa: E402
from ops.agent.episode import TaskSpec  # noqa: E402
from ops.evaluation.evaluate import evaluate_policy  # noqa: E402
from ops.environments.simulator import SimEnvironment, template_task_spec  # noqa: E402
from phonesim.pretrain import pretrain_template_ids  # noqa: E402
from phonesim.solver import solve  # noqa: E402
from phonesim.tasks import instantiate  # noqa: E402
from training.inference.local_policy import GenerationSettings, LocalPolicy  # noqa: E402


class FirstStepDone(SimEnvironment):
    """The simulator with a shortest solution's first action already taken at reset."""

    def reset(self, task: TaskSpec):
        super().reset(task)
        self.phone.step(solve(self.phone, self.instance)[0])
        return self.observe()


def evaluate(checkpoint: str, tasks: list[tuple[TaskSpec, str]], expected_apps: dict, k: int,
             temperature: float, first_step_done: bool = False,
             constrain_echo: bool = False, constrain_typing: bool = False) -> tuple[pl.DataFrame, dict]:
    """One checkpoint's episodes (`benchmark_results` rows) and its summary."""
    agent = LocalPolicy(checkpoint, "elements",
                        generation=GenerationSettings(max_new_tokens=48, temperature=temperature, seed=0,
                                                      constrain_echo=constrain_echo,
                                                      constrain_typing=constrain_typing))
    env_class = FirstStepDone if first_step_done else SimEnvironment
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.time()
        evaluation = evaluate_policy(checkpoint, agent, tasks, lambda: env_class(size=(540, 1200)),
                                     ParquetAttemptStore(pafs.LocalFileSystem(), tmp), k, expected_apps)
        seconds = time.time() - t0
    results, attempts, steps = evaluation.results, evaluation.attempts, evaluation.steps
    table = pass_at_k(results, k)
    first = steps.filter((pl.col("step") == 0) & (pl.col("screen") == "launcher"))
    first_actions = Counter()  # the echoed row of element actions, else the action type
    for r in first.iter_rows(named=True):
        kind = json.loads(r["action"])["type"] if r["action"] else "invalid"
        first_actions[f"{kind} {r['conclusion']}".strip()[:48]] += 1
    launcher = {} if first_step_done else {  # no task starts at the launcher then
        "first_launcher_actions": dict(first_actions.most_common(8)),
        "first_app_right": round(float(results["first_app_right"].mean() or 0.0), 3),
    }
    return results, {
        "checkpoint": checkpoint, "tasks": len(tasks), "episodes": results.height, "seconds": round(seconds, 1),
        "table": table.to_dicts(), "end_reasons": dict(Counter(attempts["end_reason"].to_list())),
        "invalid_step_rate": round(float(steps["action"].is_null().mean()), 3), **launcher,
        "solved_templates": sorted({t.split("#")[0] for t in
                                    results.filter(pl.col("success"))["task_id"].to_list()}),
    }


def held_out_pretraining_tasks(seeds: int, first_seed: int) -> list[tuple[TaskSpec, str]]:
    """Distinct instances (seeds first_seed, ...) of the held-out pretraining apps' templates."""
    tasks = []
    for template_id in pretrain_template_ids(held_out=True):
        seen: set[str] = set()
        for seed in range(first_seed, first_seed + 4 * seeds):
            inst = instantiate(template_id, seed)
            if inst.key not in seen and len(seen) < seeds:
                seen.add(inst.key)
                tasks.append((template_task_spec(inst), f"L{inst.difficulty}"))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--split", default="test", choices=["train", "test", "pretrain"])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="first template seed (the curriculum mines train-split templates at seeds 0, 1, ...)")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--first-step-done", action="store_true",
                        help="start every task with the right app open (first_app_right then means nothing)")
    parser.add_argument("--constrain-echo", action="store_true",
                        help="echoed rows must be rows of the screen (training.inference.echo_constraint)")
    parser.add_argument("--constrain-typing", action="store_true",
                        help="typed text must be a string the hints or the instruction offer "
                             "(training.inference.typing_constraint)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads; one lets evaluations run side by side, one per core")
    parser.add_argument("--episodes-out", type=Path, default=None,
                        help="also write every episode (a pass_at_k / versus_baseline frame) to this Parquet file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.split == "pretrain":
        tasks = held_out_pretraining_tasks(args.seeds, args.first_seed)
    elif args.split == "test":
        tasks = held_out_tasks(args.seeds, first_seed=args.first_seed)
    else:
        tasks = unseen_train_tasks(args.seeds, args.first_seed)
    expected_apps = first_apps([t for t, _ in tasks])
    episodes = []
    for ckpt in args.checkpoints:
        results, summary = evaluate(ckpt, tasks, expected_apps, args.k, args.temperature, args.first_step_done,
                                    args.constrain_echo, args.constrain_typing)
        episodes.append(results)
        print(json.dumps(summary, default=str), flush=True)
    every = pl.concat(episodes)
    if args.episodes_out:
        every.write_parquet(args.episodes_out)
    if len(episodes) > 1:  # the first checkpoint is the baseline of a paired comparison
        versus = versus_baseline(every, args.k, baseline=args.checkpoints[0])
        print(json.dumps({"versus": args.checkpoints[0], "rows": versus.to_dicts()}))


if __name__ == "__main__":
    main()
