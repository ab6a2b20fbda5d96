"""critic_calibration: how far a critic agrees with the simulator's ground truth.

By default it measures the critic that labelled the rollouts. With `rejudge: true` it re-judges
the stored attempts with the LLM critic resource (seed 000 table 6 ablation) and compares that
critic's decisions with ground truth and its step labels with the rollout critic's.
"""

import json
from dataclasses import asdict

import dagster as dg
import polars as pl
from pydantic import Field

from ops.critic.calibration import calibrate
from ops.critic.llm_critic import LLMCritic
from ops.critic.rejudge import rejudge
from resources.experiment import experiment_of, experiment_partitions, lineage_metadata
from resources.llm import LLMResource
from resources.storage import StorageLocation


class CalibrationConfig(dg.Config):
    rejudge: bool = Field(default=False, description="Re-judge stored attempts with the LLM critic resource.")
    max_workers: int = Field(default=4, ge=1, description="Attempts re-judged at once.")


def _labels(step_analysis: str) -> list[bool]:
    return [s["reasonable"] for s in sorted(json.loads(step_analysis), key=lambda s: s["step"])]


@dg.asset(partitions_def=experiment_partitions, group_name="interaction", code_version="calibration-1")
def critic_calibration(context: dg.AssetExecutionContext, config: CalibrationConfig, rollout_attempts: pl.DataFrame,
                       critic_feedback: pl.DataFrame, llm: LLMResource, storage: StorageLocation) -> dict:
    """Decision accuracy, false-success rate and step-label agreement of a critic."""
    truth = rollout_attempts.filter(pl.col("gt_success").is_not_null()).select("task_id", "attempt", "gt_success")
    reference = {(r["task_id"], r["attempt"]): r for r in critic_feedback.iter_rows(named=True)}
    keys = [(r["task_id"], r["attempt"]) for r in truth.iter_rows(named=True)]
    gt = [r["gt_success"] for r in truth.iter_rows(named=True)]
    errors: list[str] = []
    if config.rejudge:
        policy_version = rollout_attempts["policy_version"][0]
        critic = LLMCritic(llm.get_client(), name=f"llm:{llm.model}")
        judged = {(r.task_id, r.attempt): r.outcome for r in rejudge(
            storage.attempt_store(experiment_of(context)), policy_version,
            sorted({k[0] for k in keys}), critic, config.max_workers)}
        errors = [f"{k}: {v}" for k, v in judged.items() if isinstance(v, Exception)]
        kept = [(k, t) for k, t in zip(keys, gt) if not isinstance(judged.get(k), Exception) and k in judged]
        decisions = [judged[k].decision for k, _ in kept]
        labels = [[s.reasonable for s in judged[k].step_analysis] for k, _ in kept]
        reference_labels = [_labels(reference[k]["step_analysis"]) for k, _ in kept]
        critic_name, truths = critic.name, [t for _, t in kept]
    else:
        decisions = [reference[k]["decision"] for k in keys]
        labels, reference_labels, truths = [], [], gt
        critic_name = critic_feedback["critic"][0] if critic_feedback.height else "none"
    report = calibrate(decisions, truths, labels, reference_labels)
    context.add_output_metadata({
        **lineage_metadata(context, config), "critic": critic_name, **{k: v for k, v in asdict(report).items()
                                                                       if v is not None},
        "errors": len(errors), "error_samples": dg.MetadataValue.json(errors[:10]),
    })
    return {"critic": critic_name, **asdict(report), "errors": errors}
