"""How far the embedded model's size and recipe go when nothing is held out: a diagnostic, never a base.

    python benchmarks/in_distribution_fit.py OUT [--seeds 20] [--first-seed 100] [--max-steps 6000]
        [--text-hidden 64] [--layers 2] [--threads 1] [--solve-workers 1] [--cache-dir DIR]
    python benchmarks/base_ceiling.py OUT --parts train,test

Trains a model of the base's architecture on the target's own train-split episodes, as the world recipe trains on
the pretraining world's (`training.base.world_episodes`: every step of a solver-played, judge-verified instance,
the stop where the goal holds, half the episodes with a detour and its recovery, 30 % of the samples with the
critic's hint lines), at seeds `--first-seed`.. (instances whose instruction is one `base_ceiling.py` measures at
its first ten seeds are left out). Its report scores the test split's episodes, teacher-forced and unhinted.

This breaks the pretraining world's disjointness on purpose (issue #38's base must never see a target template): it
answers whether the model could reach the base targets (≥ 10 % of train-split episodes unaided, test Pass@3 in
5-40 %) if the pretraining world were as close to the target as the target itself. If it cannot, the world's design
is not what stands in the way. Resumable: the same command continues an interrupted run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.base_ceiling import tasks_of  # noqa: E402
from phonesim.tasks import templates  # noqa: E402
from training.base.bundled import git_commit, write_provenance  # noqa: E402
from training.base.pretrain import BasePretrainConfig, pretrain_base_policy  # noqa: E402
from training.base.world_recipe import collect_episodes, episode_sampler  # noqa: E402

MEASURED_SEEDS = 10  # base_ceiling.py's final measure: ten instances per template


def train_split_episodes(seeds: int, first_seed: int, cache: Path | None, workers: int):
    """Solver episodes of the train split's templates at seeds first_seed.., none an instance base_ceiling measures."""
    measured = {task.instruction for part in ("train", "test") for task, _ in tasks_of(part, MEASURED_SEEDS)}
    episodes = collect_episodes([t.id for t in templates(split="train")], seeds, 0, 0.5, cache, workers, first_seed)
    return [e for e in episodes if e.instruction not in measured]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=20, help="train-split instances per template")
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--max-steps", type=int, default=6000)
    parser.add_argument("--text-hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--solve-workers", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args()
    commit = git_commit()
    train = train_split_episodes(args.seeds, args.first_seed, args.cache_dir, args.solve_workers)
    test = collect_episodes([t.id for t in templates(split="test")], 1, 1, 0.0, args.cache_dir, args.solve_workers)
    config = BasePretrainConfig(max_steps=args.max_steps, max_seconds=1e6, threads=args.threads,
                                text_hidden=args.text_hidden, layers=args.layers)
    sampler = episode_sampler(train, hint_rate=0.3)
    sampler.__qualname__ = (f"in_distribution_fit({len(train)} train-split episodes, seeds {args.first_seed}.."
                            f"{args.first_seed + args.seeds - 1})")
    report = pretrain_base_policy(args.out, config, sampler,
                                  eval_sample_fn=episode_sampler(test, hint_rate=0.0))
    command = "python benchmarks/in_distribution_fit.py " + " ".join(sys.argv[1:])
    write_provenance(args.out, command, config.model_dump(), report.sample_fn, commit)
    print(json.dumps({"checkpoint": str(args.out), "train_episodes": len(train), "test_episodes": len(test),
                      "steps": report.steps, "train_seconds": round(report.train_seconds),
                      "test_click_accuracy": round(report.click_accuracy, 3), "chance": round(report.click_chance, 3),
                      "test_per_skill_exact": {k: round(v.exact, 3) for k, v in report.per_skill.items()}}))


if __name__ == "__main__":
    main()
