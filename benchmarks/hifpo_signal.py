"""HiFPO's reward signal on a stored experiment's step prompts, read only:
`python benchmarks/hifpo_signal.py CKPT [CKPT ...] [--root R] [--experiment default] [--prompts 240]
[--generations G] [--seed 0] [--threads 1] [--samples-out FILE] [--prompts-from step-datasets|held-out]
[--seeds-per-template 1] [--world-seed 0]`. CKPT is a checkpoint directory or the word
`base` / `hifpo` / `rft` / `grsd` / `adagrpo` (the experiment's stored checkpoint asset); e.g. `base hifpo`.

Draws `--prompts` step samples (seeded) of the experiment's `step_datasets` (its training step prompts) or, with
`--prompts-from held-out`, of the benchmark's held-out templates (`ops.evaluation.benchmark.held_out_tasks`, test and ood
splits, `--seeds-per-template` instances each): every step of the simulator solver's shortest solution, with the
prompt the policy would see there without hints and the solver's next action as target
(`training.trainers.solver_steps`, on the screen size of the experiment's rollouts; tasks that give no rows are
counted by reason with the solver steps they leave out). For each checkpoint samples G
responses per step prompt and scores them exactly as one HiFPO training step does: the GRPOTrainer
`training.methods.hifpo.trainer.prepare_hifpo` builds generates and scores them
(`training.methods.hifpo.signal.measure_signal`), with the settings of the experiment's stored HiFPO run (preset
and overrides from its lineage; `cpu_tiny` when it has none) and the checkpoints' action format. Prints plain
tables: (1) the share of groups with zero reward variance (GRPO's `frac_reward_zero_std`: no gradient from that
prompt), all 0 or all full reward, by the target action's type; (2) mean reward and its type / argument / format
components by target type; (3) for every checkpoint after the first, the mean per-token k3 KL of its responses
against the first (TRL's estimator); (4) tables (1) and (2) by whether the prompt carried hints. Same prompts and
sampling seed for every checkpoint, so the figures compare. `--threads` (default 1) sets torch's CPU threads.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402
from PIL import Image  # noqa: E402

from ops.evaluation.benchmark import held_out_tasks  # noqa: E402
from training.methods.checkpoint import Checkpoint  # noqa: E402
from ops.agent.policy_prompt import PromptStyle
from ops.agent.policy_prompt import OUTPUT_FORMATS  # noqa: E402
from ops.environments.simulator import SimEnvironment  # noqa: E402
from resources.experiment import UNPARTITIONED, PartitionAddress  # noqa: E402
from resources.storage import ArtifactStore, ParquetIOManager, StorageLocation  # noqa: E402
from training.methods.hifpo.config import HiFPOConfig
from training.methods.hifpo.signal import (draw_prompts, group_table, kl_table, measure_signal,  # noqa: E402
                                            reward_table, with_generations)
from training.trainers.solver_steps import solver_step_samples  # noqa: E402
from training.trainers.step_datasets import build_step_dataset  # noqa: E402

STORED_CHECKPOINTS = {"base": "base_policy", "hifpo": "hifpo_checkpoint", "rft": "rft_checkpoint",
                      "grsd": "grsd_checkpoint", "adagrpo": "adagrpo_checkpoint"}


class StoredRun:
    """One experiment of a storage root, read through the project's IO manager and artifact store."""

    def __init__(self, root: str, experiment: str) -> None:
        location = StorageLocation(root=root)
        self.io = ParquetIOManager(location=location)
        self.artifacts = ArtifactStore(location=location)
        self.address = PartitionAddress(experiment, UNPARTITIONED)

    def load(self, asset: str):
        return self.io.load(dg.AssetKey(asset), self.address)

    def checkpoint(self, word: str) -> tuple[Path, Checkpoint]:
        """The weights directory and record of the experiment's stored checkpoint asset named by `word`."""
        record = Checkpoint.model_validate(self.load(STORED_CHECKPOINTS[word]))
        if record.uri is None:
            raise SystemExit(f"{word}: the stored {STORED_CHECKPOINTS[word]} has no weights ({record.version})")
        return self.artifacts.local_path(record.uri), record

    def hifpo_settings(self) -> tuple[str, dict]:
        """(preset, overrides) of the experiment's stored HiFPO run; cpu_tiny without overrides when none."""
        if not self.io.stored(dg.AssetKey("hifpo_checkpoint"), self.address):
            return "cpu_tiny", {}
        config = self.io.manifest(dg.AssetKey("hifpo_checkpoint"), self.address).get("lineage", {}).get("config", {})
        return config.get("preset", "cpu_tiny"), config.get("overrides", {})


def resolve(run: StoredRun, names: list[str]) -> tuple[list[tuple[str, Path]], set[str]]:
    """(name, directory) per checkpoint argument, and the prompt styles of the stored ones."""
    checkpoints, styles = [], set()
    for name in names:
        if name in STORED_CHECKPOINTS:
            path, record = run.checkpoint(name)
            styles.add(record.prompt_style)
            checkpoints.append((name, path))
        elif (Path(name) / "config.json").is_file():
            checkpoints.append((Path(name).name, Path(name)))
        else:
            raise SystemExit(f"{name}: neither a checkpoint directory (config.json) nor one of {sorted(STORED_CHECKPOINTS)}")
    return checkpoints, styles


def held_out_rows(run: StoredRun, style: str, seeds_per_template: int, world_seed: int) -> tuple[pl.DataFrame, str]:
    """Step samples along the solver's solutions of the held-out templates' instances, on the screen size of the
    experiment's rollouts (its stored step images), and one line saying how many tasks gave rows and why the rest
    did not."""
    with Image.open(io.BytesIO(run.load("step_datasets")["image"][0])) as screen:
        size = screen.size
    tasks = [task for task, _ in held_out_tasks(seeds_per_template, world_seed=world_seed)]
    built = solver_step_samples(tasks, style, lambda: SimEnvironment(size, world_seed), world_seed)
    line = (f"held-out step prompts: {len(tasks)} template instances ({seeds_per_template} per template, world seed "
            f"{world_seed}, screen {size[0]}x{size[1]}, style {PromptStyle(style).value}); "
            f"{built.teaching.verified} solved and verified give {built.rows.height} step rows; not built: "
            f"{dict(built.teaching.failures.most_common())} ({built.skipped_steps} solver steps skipped)")
    if built.annotation is not None:
        line += (f"; reasoning targets: {built.annotation.annotated} of {built.annotation.steps} steps annotated, "
                 f"failures {dict(built.annotation.failures)}")
    return built.rows, line


def settings(run: StoredRun, styles: set[str], generations: int | None, threads: int) -> HiFPOConfig:
    """The stored HiFPO run's settings, answering in the checkpoints' format, with `generations` responses per
    prompt (None: the run's) and `threads`."""
    preset, overrides = run.hifpo_settings()
    if len(styles) > 1:
        raise SystemExit(f"the checkpoints speak different prompt styles {sorted(styles)}: measure them apart")
    if styles:  # as the hifpo_checkpoint asset does: responses are scored in the format the policy writes
        overrides = {"action_format": OUTPUT_FORMATS[styles.pop()], **overrides}
    config = HiFPOConfig.preset(preset, {**overrides, "torch_threads": threads})
    return config if generations is None else with_generations(config, generations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint directories or base / hifpo / rft / grsd / adagrpo")
    parser.add_argument("--root", default=os.environ.get("MOBILEFORGE_STORAGE_ROOT"),
                        help="storage root (default $MOBILEFORGE_STORAGE_ROOT)")
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--prompts", type=int, default=240, help="step prompts drawn (seeded)")
    parser.add_argument("--prompts-from", choices=("step-datasets", "held-out"), default="step-datasets",
                        help="the experiment's step_datasets (training prompts), or steps of the solver's solutions of "
                             "the benchmark's held-out templates")
    parser.add_argument("--seeds-per-template", type=int, default=1, help="held-out instances per template")
    parser.add_argument("--world-seed", type=int, default=0, help="the simulator world of the held-out tasks")
    parser.add_argument("--generations", type=int, default=None,
                        help="G responses per prompt (default: the HiFPO run's num_generations)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the draw of prompts and the sampling")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--samples-out", type=Path, default=None,
                        help="also write every sampled response (checkpoint, prompt, response, rewards, ...) to this "
                             "Parquet file")
    args = parser.parse_args()
    if args.root is None:
        raise SystemExit("no storage root: pass --root or set MOBILEFORGE_STORAGE_ROOT")
    run = StoredRun(args.root, args.experiment)
    checkpoints, styles = resolve(run, args.checkpoints)
    source = "the experiment's step_datasets"
    if args.prompts_from == "held-out":
        if len(styles) != 1:
            raise SystemExit(f"held-out step prompts are written in the checkpoints' prompt style: name stored "
                             f"checkpoints of one style (got {sorted(styles) or 'none'})")
        rows, source = held_out_rows(run, next(iter(styles)), args.seeds_per_template, args.world_seed)
    else:
        rows = run.load("step_datasets")
    config = settings(run, styles, args.generations, args.threads)
    prompts = draw_prompts(build_step_dataset(rows), args.prompts, args.seed)

    began = time.perf_counter()
    samples = measure_signal(checkpoints, prompts, config, seed=args.seed)
    seconds = time.perf_counter() - began
    if args.samples_out:
        samples.write_parquet(args.samples_out)
    measured = samples.filter(pl.col("checkpoint") == checkpoints[0][0])["prompt"].n_unique()
    reward = config.reward_config()
    print(source)
    print(f"root {args.root}, experiment {args.experiment}: {len(prompts)} step prompts drawn (seed {args.seed}), "
          f"{measured} measured (the rest longer than max_prompt_length={config.max_prompt_length}); "
          f"G={config.num_generations}, temperature {config.temperature}, top_p {config.top_p}, "
          f"max_completion_length {config.max_completion_length}, format {config.action_format}, "
          f"reward {reward.model_dump(exclude_none=True)}; {seconds:.0f} s")
    for name, path in checkpoints:
        print(f"  {name}: {path}")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, float_precision=3, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True, tbl_width_chars=200):
        print("\n(1) groups whose G rewards are all alike (zero variance: no gradient), by target action type")
        print(group_table(samples, reward.lambda_type + reward.lambda_arg))
        print("\n(2) mean reward and components per response, by target action type")
        print(reward_table(samples))
        kl = kl_table(samples)
        if kl is not None:
            print(f"\n(3) mean per-token k3 KL of each checkpoint's own responses against {checkpoints[0][0]}")
            print(kl)
        print("\n(4) the same two tables by whether the step prompt carried hints (has_hint)")
        print(group_table(samples, reward.lambda_type + reward.lambda_arg, by="has_hint"))
        print(reward_table(samples, by="has_hint"))

if __name__ == "__main__":
    main()
