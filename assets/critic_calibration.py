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

from assets.metadata import md_table, tidy
from assets.placement import pool_tags
from ops.judging.critic.calibration import agreement_by_kind, calibrate_rejudged, calibrate_rollout_critic
from ops.judging.judges import JUDGE_CRITICS
from ops.judging.critic.llm_critic import LLMCritic
from ops.judging.critic.rejudge import rejudge
from ops.config_bounds import MAX_WORKERS
from resources.experiment import experiment_of, experiment_partitions
from resources.deployment import LLM_ENDPOINT
from resources.llm import LLMResource
from resources.storage import StorageLocation


class CalibrationConfig(dg.Config):
    rejudge: bool = Field(default=False, description="Re-judge stored attempts with the LLM critic resource.")
    max_workers: int = Field(default=4, ge=1, le=MAX_WORKERS, description="Attempts re-judged at once.")


def _labels(step_analysis: str) -> list[bool]:
    return [s["reasonable"] for s in sorted(json.loads(step_analysis), key=lambda s: s["step"])]


def by_task_type_md(rollout_attempts: pl.DataFrame, curriculum_tasks: pl.DataFrame) -> dg.MetadataValue | None:
    """The critic's agreement with the judge per task type (the curriculum's variation type), with its false
    successes and false failures counted; None where nothing was judged by both."""
    judged = rollout_attempts.filter(pl.col("gt_success").is_not_null() & pl.col("critic_decision").is_not_null()
                                     & ~pl.col("judge").is_in(list(JUDGE_CRITICS)))
    if not judged.height:
        return None
    kind = dict(zip(curriculum_tasks["task_id"], curriculum_tasks["variation_type"]))
    keys = [(r["task_id"], r["attempt"]) for r in judged.iter_rows(named=True)]
    rows = agreement_by_kind(dict(zip(keys, judged["critic_decision"])), dict(zip(keys, judged["gt_success"])),
                             {k: kind.get(k[0], "unknown") for k in keys})
    return md_table(["task type", "attempts", "agreement", "false success", "false failure", "judged successes"],
                    [(r.kind, r.attempts, round(r.agreement, 3), r.false_success, r.false_failure, r.successes)
                     for r in rows])


@dg.asset(partitions_def=experiment_partitions, group_name="interaction", code_version="calibration-3",
          pool=LLM_ENDPOINT, op_tags=pool_tags(LLM_ENDPOINT),
          description="One report (not a table): a critic's decision agreement, false-success and false-failure "
                      "rates against the simulator's judge, or 'critic = ground truth, not measured' when its "
                      "decision is the judge's.")
def critic_calibration(context: dg.AssetExecutionContext, config: CalibrationConfig, rollout_attempts: pl.DataFrame,
                       critic_feedback: pl.DataFrame, curriculum_tasks: pl.DataFrame, llm: LLMResource,
                       storage: StorageLocation) -> dict:
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
    by_type = by_task_type_md(rollout_attempts, curriculum_tasks) if not config.rejudge else None
    context.add_output_metadata(tidy({
        **({"by_task_type": by_type} if by_type is not None else {}),
        **{k: v for k, v in summary.items() if k != "errors" and v is not None},
        "errors": len(result.errors), "error_samples": dg.MetadataValue.json(result.errors[:10]),
    }))
    return summary
