"""What a base checkpoint does unaided, against the targets of a base worth adapting:

    python benchmarks/base_ceiling.py CKPT [--seeds 1] [--store DIR] [--parts pretrain,train,test] [--threads 1]

- **pretrain**: the pretraining world's held-out apps (`phonesim.pretrain.HELD_OUT_APPS`, never
  pretrained on), one greedy attempt per task: how far the pretraining transfers within its world.
- **train**: the target's train-split templates at the curriculum's own seeds (0, 1, ...: the
  instances online RL samples), three attempts at temperature 1.0 as AdaGRPO samples them: the
  share of successful episodes (target: >= 0.10, an RL signal) and Pass@3.
- **test**: the benchmark's held-out templates, three attempts at temperature 0.7 (the benchmark's
  default): Pass@3 and grounded@3 of the test split (target: 0.05..0.40) and, beside it, of ood.

Decoding is the default run's: the row-echo and typing constraints on. Attempts are staged under
`--store` (default `.mobileforge/base_ceiling/<checkpoint name>`), so an interrupted measurement
resumes where it stopped. Prints one JSON line per part.

`--start-in-app` is an oracle ablation, never a base's figure: every episode starts with its task's app
(the app a shortest solution opens first) already open, as if the base knew which app holds what. It
measures what is left once that knowledge is given; `first_app_right` then scores the first action
inside the app and means nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402
import torch  # noqa: E402
from pyarrow import fs as pafs  # noqa: E402

from benchmarks.policy_tasks import held_out_pretraining_tasks  # noqa: E402
from ops.data.attempt_store import ParquetAttemptStore  # noqa: E402
from ops.evaluation.benchmark import first_apps, pass_at_k, template_tasks  # noqa: E402
from ops.evaluation.evaluate import evaluate_policy  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from phonesim.actions import Action, ActionType  # noqa: E402
from phonesim.pretrain import PHONES, pretrain_specs  # noqa: E402
from phonesim.tasks import all_templates  # noqa: E402
from training.inference.local_policy import GenerationSettings, LocalPolicy  # noqa: E402

PARTS = {  # part -> (attempts, temperature)
    "pretrain": (1, 0.0),
    "train": (3, 1.0),
    "test": (3, 0.7),
}


def pretraining_group(template_id: str) -> str:
    """A pretraining template's row of the report: its app's kind, and whether the app is hand-written or generated
    (`collection:handmade`, `timed:generated`, ...)."""
    app = template_id.split(".", 1)[0]
    kind = type(pretrain_specs()[app]).__name__.removesuffix("Spec").lower()
    return f"{kind}:{'handmade' if app in PHONES['handmade'] else 'generated'}"


def tasks_of(part: str, seeds: int):
    if part == "pretrain":
        return held_out_pretraining_tasks(seeds, 0)
    if part == "train":
        return template_tasks("train", seeds)
    return template_tasks("test", seeds) + template_tasks("ood", seeds)


class InAppStart(SimEnvironment):
    """The oracle ablation's phone: the task's phone with the task's first app open."""

    def __init__(self, apps: dict[str, str]):
        super().__init__(size=(540, 1200))
        self.apps = apps

    def reset(self, task):
        super().reset(task)
        app = self.apps[task.task_id]
        if app in self.phone.apps:  # not for a task done on the launcher itself
            assert self.step(Action(ActionType.OPEN_APP, app=app)).ok, app
        return self.observe()


def measure(checkpoint: str, part: str, seeds: int, store: Path, start_in_app: bool = False) -> dict:
    k, temperature = PARTS[part]
    tasks = tasks_of(part, seeds)
    agent = LocalPolicy(checkpoint, "elements", generation=GenerationSettings(
        max_new_tokens=48, temperature=temperature, seed=0, constrain_echo=True, constrain_typing=True))
    began, cpu = time.time(), time.process_time()
    apps = first_apps([t for t, _ in tasks])
    in_app = {task_id: app for task_id, (_, app) in apps.items()}
    environment = (lambda: InAppStart(in_app)) if start_in_app else (lambda: SimEnvironment(size=(540, 1200)))
    evaluation = evaluate_policy(checkpoint, agent, tasks, environment,
                                 ParquetAttemptStore(pafs.LocalFileSystem(), str(store / part)), k, apps)
    results = evaluation.results
    split_of = {t.id: t.split for t in all_templates().values()}
    out = {"part": part, "checkpoint": checkpoint, "start_in_app": start_in_app, "tasks": len(tasks),
           "episodes": results.height, "k": k,
           "temperature": temperature, "episode_success": round(float(results["success"].mean()), 4),
           "seconds": round(time.time() - began), "cpu_seconds": round(time.process_time() - cpu),
           "false_complete": round(float(results["false_complete"].mean()), 4),
           "first_app_right": round(float(results["first_app_right"].mean()), 4)}
    split_of |= {t: pretraining_group(t) for t in results["template_id"].to_list() if t not in split_of}
    splits = set(split_of[t] for t in results["template_id"].to_list())
    for split in sorted(splits):
        rows = results.filter(pl.col("template_id").replace_strict(split_of, default=None) == split)
        overall = pass_at_k(rows, k).filter(pl.col("difficulty") == "all").to_dicts()[0]
        out[split] = {key: round(v, 4) if isinstance(v, float) else v for key, v in overall.items()
                      if key.startswith(("pass@", "grounded@", "tasks"))}
    out["solved_templates"] = sorted(set(results.filter(pl.col("success"))["template_id"].to_list()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--seeds", type=int, default=1, help="instances per template (10 for the final measure)")
    parser.add_argument("--parts", default="pretrain,train,test")
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--start-in-app", action="store_true",
                        help="oracle ablation: each episode starts inside its task's app (see the docstring)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    store = args.store or Path(".mobileforge/base_ceiling") / (
        f"{Path(args.checkpoint).name}-s{args.seeds}" + ("-in-app" if args.start_in_app else ""))
    for part in args.parts.split(","):
        if part not in PARTS:
            raise SystemExit(f"unknown part {part!r}; choose from {sorted(PARTS)}")
        print(json.dumps(measure(args.checkpoint, part, args.seeds, store, args.start_in_app)), flush=True)


if __name__ == "__main__":
    main()
