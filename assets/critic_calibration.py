"""critic_calibration: how far a critic agrees with the simulator's judge.

By default it reports on the critic that labelled the rollouts: the programmatic critic's
decision is the judge's own verdict, so it says "critic = ground truth, not measured" instead of
a figure; an LLM rollout critic is measured. With `rejudge: true` it re-judges the stored
attempts with the LLM critic resource (MobileForge table 6 ablation) and reports that critic's
agreement, false success and false failure against the judge, and its step labels' agreement
with the rollout critic's.
"""

import json

import dagster as dg
import polars as pl
from pydantic import Field

from assets.metadata import tidy
from assets.placement import pool_tags
from ops.judging.critic.calibration import calibrate_rejudged, calibrate_rollout_critic
from ops.judging.critic.llm_critic import LLMCritic
from ops.judging.critic.rejudge import rejudge
from resources.deployment import LLM_ENDPOINT
from resources.experiment import experiment_of, experiment_partitions, lineage_metadata
from resources.llm import LLMResource
from resources.storage import StorageLocation


class CalibrationConfig(dg.Config):
    rejudge: bool = Field(default=False, description="Re-judge stored attempts with the LLM critic resource.")
    max_workers: int = Field(default=4, ge=1, description="Attempts re-judged at once.")


def _labels(step_analysis: str) -> list[bool]:
    return [s["reasonable"] for s in sorted(json.loads(step_analysis), key=lambda s: s["step"])]


@dg.asset(partitions_def=experiment_partitions, group_name="interaction", code_version="calibration-2",
          pool=LLM_ENDPOINT, op_tags=pool_tags(LLM_ENDPOINT),
          description="One report (not a table): a critic's decision agreement, false-success and false-failure "
                      "rates against the simulator's judge, or 'critic = ground truth, not measured' when its "
                      "decision is the judge's.")
def critic_calibration(context: dg.AssetExecutionContext, config: CalibrationConfig, rollout_attempts: pl.DataFrame,
                       critic_feedback: pl.DataFrame, llm: LLMResource, storage: StorageLocation) -> dict:
    """Agreement, false-success and false-failure rates of a critic against the judge, where they measure something."""
    truths = {(r["task_id"], r["attempt"]): r["gt_success"]
              for r in rollout_attempts.filter(pl.col("gt_success").is_not_null()).iter_rows(named=True)}
    feedback = {(r["task_id"], r["attempt"]): r for r in critic_feedback.iter_rows(named=True)}
    if config.rejudge:
        critic = LLMCritic(llm.get_client(), name=f"llm:{llm.model}")
        judged = {(r.task_id, r.attempt): r.outcome for r in rejudge(
            storage.attempt_store(experiment_of(context)), rollout_attempts["policy_version"][0],
            sorted({task_id for task_id, _ in truths}), critic, config.max_workers)}
        result = calibrate_rejudged(critic.name, truths, judged,
                                    {k: _labels(feedback[k]["step_analysis"]) for k in truths if k in feedback})
    else:
        result = calibrate_rollout_critic(truths, {k: (feedback[k]["critic"], feedback[k]["decision"]) for k in truths})
    summary = result.to_dict()
    context.add_output_metadata(tidy({
        **{k: v for k, v in summary.items() if k != "errors" and v is not None},
        "errors": len(result.errors), "error_samples": dg.MetadataValue.json(result.errors[:10]),
        **lineage_metadata(context, config),
    }))
    return summary
