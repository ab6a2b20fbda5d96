"""HiFPO as a registered method: step-level GRPO on the filtered step dataset (MobileForge §2.3.4)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ops.agent.policy_prompt import OUTPUT_FORMATS, PromptStyle
from ops.data.schemas import conform
from training.methods.hifpo.config import HiFPOConfig
from training.methods.method import NO_WEIGHTS, Method, MethodResult, MethodRun, base_start


class HiFPOOptions(BaseModel):
    remedial: bool = Field(default=False, description=(
        "After HiFPO's training (after the last history-alignment round when it is on), train one more epoch of the "
        "same GRPO training on the step dataset supplemented by the remedial trajectories (teacher-repaired failed "
        "attempts, MobileWizard §3.4.4, App. B's last epoch). Off by default until measured. With the default "
        "solver teacher those rows are the simulator's own plans, help a deployment would not have (report them "
        "beside the faithful result); a teacher policy is MobileWizard's setting."))


def train(run: MethodRun) -> MethodResult:
    from datasets import Dataset

    from training.trainers.step_datasets import build_step_dataset

    start, services, steps = base_start(run), run.services, run.inputs["step_datasets"]
    if start.uri is None:
        return MethodResult.unchanged(start, NO_WEIGHTS)
    if steps.height == 0:
        return MethodResult.unchanged(start, "the step dataset is empty: every task was filtered out")
    # responses are scored in the format the policy writes (overrides may still name another)
    settings = run.settings(action_format=OUTPUT_FORMATS[PromptStyle(services.prompt_style)])
    remedial = None
    if run.options.remedial:  # an empty dataset: the trainer trains without the last epoch and records why
        rows = conform(run.inputs["remedial_trajectories"], "training_samples")
        remedial = build_step_dataset(rows) if rows.height else Dataset.from_list([])
    report = services.train_hifpo(services.weights_dir(start), build_step_dataset(steps), services.workdir / "hifpo",
                                  settings, remedial=remedial)
    if "remedial_epoch" in report.details:
        services.log(f"hifpo remedial epoch: {report.details['remedial_epoch']}")
    # history alignment: validation reward per round, triggers, steps rewritten / labels kept, duplicates
    # dropped; remedial epoch: rows added, its optimizer steps, or why it was skipped
    return MethodResult(start, report=report, details=dict(report.details))


HIFPO = Method(
    name="hifpo", title="HiFPO", source="MobileForge §2.3.4",
    summary="The base trained by step-level GRPO with the adaptive GUI action reward on the step dataset "
            "(MobileForge §2.3.4); with history_alignment, in rounds with MobileWizard's history self-alignment "
            "(§3.4.3), its record in `history_alignment`; with remedial, one last epoch with the remedial "
            "trajectories added (§3.4.4), its record in `remedial_epoch`.",
    settings=HiFPOConfig, options=HiFPOOptions, train=train,
    reads=("step_datasets", "remedial_trajectories", "base_policy"),
    preload=("training.methods.hifpo.trainer",), priority=2, code_version="7")
