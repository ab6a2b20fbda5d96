"""GRSD as a registered method: SFT of each fork point's failed context on the successful attempt's
response (UI-Voyager §3.3)."""

from __future__ import annotations

from training.methods.method import NO_WEIGHTS, Method, MethodResult, MethodRun, base_start
from training.trainers.sft_config import SFTTrainConfig


def train(run: MethodRun) -> MethodResult:
    from training.trainers.step_datasets import build_step_dataset, grsd_samples

    start, services = base_start(run), run.services
    if start.uri is None:
        return MethodResult.unchanged(start, NO_WEIGHTS)
    samples = grsd_samples(run.inputs["fork_pairs"], run.inputs["rollout_steps"])
    if samples.height == 0:
        return MethodResult.unchanged(start, "no fork pairs: no task had both a successful and a failed attempt")
    report = services.train_sft(services.weights_dir(start), build_step_dataset(samples, require_response=True),
                                services.workdir / "grsd", run.settings(), method="grsd")
    return MethodResult(start, report=report)


GRSD = Method(
    name="grsd", title="GRSD", source="UI-Voyager §3.3",
    summary="The base trained by SFT of each fork point's failed context on the successful attempt's response "
            "(UI-Voyager §3.3).",
    settings=SFTTrainConfig, train=train, reads=("fork_pairs", "rollout_steps", "base_policy"),
    preload=("training.trainers.sft",), priority=1, code_version="3")
