"""The default pipeline in miniature, from rollouts to benchmark episodes, printing a digest of what
each stage produced (JSON on stdout). `test_reproducible_runs` runs it in two processes and
compares: `python -m tests.reproducibility.tiny_run`.

Greedy hint-guided rollouts of the bundled base on two train templates, the HiFPO filter with
hint-free copies, a few HiFPO (GRPO) and SFT steps, then the HiFPO checkpoint sampled at the
benchmark's temperature on two held-out tasks per split.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import polars as pl

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.evaluation.benchmark import first_apps, held_out_tasks, template_tasks
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.evaluation.evaluate import evaluate_policy
from ops.samples.filtering import FilterConfig
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.environments.simulator import SimEnvironment
from ops.samples.step_samples import build_step_samples, finish_response
from training.base.bundled import BUNDLED_DIR
from training.inference.local_policy import GenerationSettings, LocalPolicy
from training.methods.hifpo.trainer import train_hifpo
from training.methods.hifpo.config import HiFPOConfig
from training.trainers.sft import train_sft
from training.trainers.sft_config import SFTTrainConfig
from training.trainers.step_datasets import build_step_dataset, dataset_fingerprint

SCREEN = (540, 1200)


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def _weights(checkpoint: Path) -> str:
    return hashlib.sha256((checkpoint / "model.safetensors").read_bytes()).hexdigest()[:16]


def run(workdir: Path) -> dict[str, str]:
    """Run the miniature pipeline under `workdir`; digests by stage."""
    make_env = lambda: SimEnvironment(SCREEN, 0)  # noqa: E731
    decoding = GenerationSettings(max_new_tokens=48, constrain_echo=True, constrain_typing=True)
    tasks = [t for t, _ in template_tasks("train", 1, 2)]
    rollout_store = ParquetAttemptStore.from_uri(str(workdir / "rollouts"))
    run_rollouts(tasks, make_env, LocalPolicy(BUNDLED_DIR, generation=decoding, version="base"),
                 ProgrammaticCritic(0), rollout_store, RolloutConfig(attempts=2))
    attempts, steps, feedback = collect_tables(rollout_store, "base", tasks)
    samples, _ = build_step_samples(attempts, steps, feedback, FilterConfig(), hint_free_copies=True,
                                    finish_response=finish_response("elements"))
    dataset = build_step_dataset(samples)
    hifpo = train_hifpo(BUNDLED_DIR, dataset, workdir / "hifpo",
                        HiFPOConfig.cpu_tiny(max_steps=2, action_format="label_echo", report_to=[]))
    sft = train_sft(BUNDLED_DIR, build_step_dataset(samples, require_response=True), workdir / "sft",
                    SFTTrainConfig.cpu_tiny(max_steps=3, report_to=[]))
    held_out = held_out_tasks(1, 1)
    sampled = LocalPolicy(hifpo.checkpoint, generation=GenerationSettings(
        max_new_tokens=48, temperature=0.7, seed=0, constrain_echo=True, constrain_typing=True), version="hifpo")
    evaluation = evaluate_policy("hifpo", sampled, held_out, make_env,
                                 ParquetAttemptStore.from_uri(str(workdir / "benchmark")), 2,
                                 first_apps([t for t, _ in held_out], 0))
    return {
        "rollout_outputs": _digest(steps.sort("task_id", "attempt", "step")["raw_output"].to_list()),
        "step_samples": f"{samples.height} rows, {dataset_fingerprint(dataset)[:16]}",
        "hifpo_weights": _weights(hifpo.checkpoint),
        "sft_weights": _weights(sft.checkpoint),
        "benchmark_outputs": _digest(evaluation.steps.sort("task_id", "attempt", "step")["raw_output"].to_list()),
        "benchmark_results": _digest(evaluation.results.sort("task_id", "attempt").rows()),
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(Path(tmp))))
