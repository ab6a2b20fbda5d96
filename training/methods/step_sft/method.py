"""Hint SFT and no-hint SFT as registered methods (MobileForge §3 ablations, Table 4): SFT on the filtered
step dataset, with and without the corrective-hint context, beside HiFPO's GRPO on the same data. Off by
default (`--set hint_sft_checkpoint.enabled=true`, likewise no_hint_sft_checkpoint)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from training.methods.method import NO_WEIGHTS, Method, MethodResult, MethodRun, base_start
from training.methods.step_sft.samples import hint_sft_samples, no_hint_sft_samples
from training.trainers.sft_config import SFTTrainConfig


def sft_on(samples_of: Callable[[MethodRun], pl.DataFrame], name: str) -> Callable[[MethodRun], MethodResult]:
    """A method's `train`: SFT from the base on the step samples `samples_of` picks."""

    def train(run: MethodRun) -> MethodResult:
        from training.trainers.step_datasets import build_step_dataset

        start, services = base_start(run), run.services
        if start.uri is None:
            return MethodResult.unchanged(start, NO_WEIGHTS)
        samples = samples_of(run)
        if samples.height == 0:
            return MethodResult.unchanged(start, "the step dataset is empty: every task was filtered out")
        report = services.train_sft(services.weights_dir(start), build_step_dataset(samples, require_response=True),
                                    services.workdir / name, run.settings(), method=name)
        return MethodResult(start, report=report, details={"samples_with_hint": int(samples["has_hint"].sum())})

    return train


READS = ("step_datasets", "rollout_attempts", "base_policy")

HINT_SFT = Method(
    name="hint_sft", title="Hint SFT", source="MobileForge Table 4",
    summary="Ablation: the base trained by SFT on the step dataset's kept steps with their hint-contextualized "
            "prompts, as rolled out (MobileForge Table 4, against HiFPO's GRPO on the same data).",
    settings=SFTTrainConfig, train=sft_on(lambda run: hint_sft_samples(run.inputs["step_datasets"]), "hint_sft"),
    reads=READS, preload=("training.trainers.sft",), priority=1, enabled=False)

NO_HINT_SFT = Method(
    name="no_hint_sft", title="No-hint SFT", source="MobileForge Table 4",
    summary="Ablation: the base trained by SFT on the step dataset's kept steps with the prompts they would have had "
            "without the corrective hints (MobileForge Table 4).",
    settings=SFTTrainConfig,
    train=sft_on(lambda run: no_hint_sft_samples(run.inputs["step_datasets"], run.inputs["rollout_attempts"]),
                 "no_hint_sft"),
    reads=READS, preload=("training.trainers.sft",), priority=1, enabled=False)
