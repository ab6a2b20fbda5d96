"""Blocking asset checks that fail a run whose stage lost more than `MAX_LOST_SHARE` of its work to
errors — every rollout attempt to an unreachable critic, most re-judgements to a failing endpoint —
naming the asset, the counts and the first causes. A blocked check stops what depends on the asset
(no training on nothing), fails the run, and so `mobileforge run` exits non-zero saying why.

The counts are the asset's own materialization metadata; `WORK_COUNTS` says which keys hold them.
"""


from dataclasses import dataclass
from typing import Any

import dagster as dg

from resources.experiment import latest_materialization

MAX_LOST_SHARE = 0.5  # more than half of a stage's work lost: its result is not the experiment asked for
SHOWN_CAUSES = 2


@dataclass(frozen=True)
class WorkCount:
    """Where an asset's metadata counts its work: units done (`done`, summed), units lost to errors
    (`lost`) and the errors themselves (`causes`, a JSON list)."""

    asset: str
    unit: str
    done: tuple[str, ...]
    lost: str
    causes: str


WORK_COUNTS = (
    WorkCount("rollout_attempts", "rollout attempts", ("attempts_run", "attempts_resumed"), "attempts_failed", "errors"),
    WorkCount("critic_calibration", "re-judged attempts", ("attempts",), "errors", "error_samples"),
)


def _number(metadata: dict[str, Any], key: str) -> int:
    value = metadata.get(key)
    value = getattr(value, "value", value)
    return int(value) if isinstance(value, (int, float)) else 0


def lost_work(count: WorkCount, metadata: dict[str, Any]) -> str | None:
    """What `metadata` of `count.asset` says was lost, when more than MAX_LOST_SHARE of its work; else None."""
    done = sum(_number(metadata, key) for key in count.done)
    lost = _number(metadata, count.lost)
    if lost == 0 or lost <= MAX_LOST_SHARE * (done + lost):
        return None
    causes = getattr(metadata.get(count.causes), "value", None) or []
    shown = "; ".join(str(cause)[:300] for cause in causes[:SHOWN_CAUSES]) if isinstance(causes, list) else ""
    return (f"{count.asset}: {lost} of {done + lost} {count.unit} lost to errors (more than "
            f"{MAX_LOST_SHARE:.0%} of the stage's work)" + (f"; first causes: {shown}" if shown else ""))


def lost_work_check(count: WorkCount, partitions_def: dg.PartitionsDefinition | None) -> dg.AssetChecksDefinition:
    """A blocking `work_not_lost` check of `count.asset`, read from its latest materialization of the
    checked partition."""
    key = dg.AssetKey(count.asset)

    @dg.asset_check(asset=key, name="work_not_lost", partitions_def=partitions_def, blocking=True,
                    description=f"At most {MAX_LOST_SHARE:.0%} of the {count.unit} lost to errors; a stage that lost "
                                "more fails its run rather than feed what depends on it.")
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        record = (latest_materialization(context.instance, key, context.partition_key) if context.has_partition_key
                  else context.instance.get_latest_materialization_event(key))
        metadata = dict(record.asset_materialization.metadata) if record is not None else {}
        problem = lost_work(count, metadata)
        return dg.AssetCheckResult(
            passed=problem is None, severity=dg.AssetCheckSeverity.ERROR, description=problem,
            metadata={"done": sum(_number(metadata, k) for k in count.done), "lost": _number(metadata, count.lost),
                      "max_lost_share": MAX_LOST_SHARE})

    return _check
