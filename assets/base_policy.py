"""base_policy: the embedded starting policy, pretrained once on generic grounding data and reused.

It never sees curriculum or benchmark tasks: only generic instructions like "tap X", "type Y",
"go back", "scroll", "open app Z" on synthetic screens and on simulator screens reached by
random walks (training/grounding_data.py, training/sim_grounding.py). Shared by every experiment; `mobileforge run` builds it only when
it is missing (or with --rebuild-shared). A real model replaces it by pointing the policy
resource at a checkpoint or an endpoint.
"""

import json
import tempfile
from dataclasses import asdict
from pathlib import Path

import dagster as dg
from pydantic import Field

from resources.storage import ArtifactStore


class BasePolicyConfig(dg.Config):
    max_seconds: float = Field(default=330.0, gt=0, description="Wall-clock budget of the pretraining loop.")
    seed: int = Field(default=0, description="Seed of the model init and the synthetic data.")
    eval_samples: int = Field(default=300, ge=0, description="Held-out samples for the accuracy report.")


@dg.asset(group_name="learning", code_version="base-policy-1",
          description="Tiny Qwen2-VL policy pretrained on generic grounding data (checkpoint URI + report).")
def base_policy(context: dg.AssetExecutionContext, config: BasePolicyConfig, artifact_store: ArtifactStore) -> dict:
    from training.base_pretrain import BasePretrainConfig, pretrain_base_policy
    from training.sim_grounding import sim_sampler

    pretrain_config = BasePretrainConfig(max_seconds=config.max_seconds, seed=config.seed,
                                         eval_samples=config.eval_samples)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "base_policy"
        # held-out samples come from another seed's screens and another sample stream
        report = pretrain_base_policy(out, pretrain_config, sim_sampler(seed=config.seed))
        (out / "pretrain_report.json").write_text(report.to_json())
        uri = artifact_store.put_dir(out, f"base_policy/{context.run_id}")
    version = f"base:{context.run_id[:8]}"
    context.add_output_metadata({
        "uri": uri, "version": version,
        "click_accuracy": report.click_accuracy, "click_chance": report.click_chance,
        "format_valid_rate": report.format_valid_rate, "steps": report.steps,
        "train_seconds": round(report.train_seconds, 1),
        "per_skill": dg.MetadataValue.json({k: asdict(v) for k, v in report.per_skill.items()}),
        "data_seen": dg.MetadataValue.json(report.data_seen),
        "config": dg.MetadataValue.json(json.loads(pretrain_config.model_dump_json())),
    })
    return {"uri": uri, "version": version, "click_accuracy": report.click_accuracy,
            "click_chance": report.click_chance}
