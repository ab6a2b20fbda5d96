"""base_policy: the embedded starting policy, pretrained on generic grounding data and reused.

It never sees curriculum or benchmark tasks: only generic instructions like "tap X", "type Y",
"go back", "scroll", "open app Z" on synthetic screens and on simulator screens reached by
random walks (training/base/grounding_data.py, training/base/sim_grounding.py), some with an episode
context: earlier steps to read, when to terminate, critic hints to follow
(training/base/episode_skills.py). By default it is the bundled result of one step-budgeted run of
that recipe (training/base/bundled.py explains why); `source: pretrain` reruns it. Shared by
every experiment; `mobileforge run` builds it only when it is missing, stored by another code
version (the code version carries a digest of the bundled checkpoint, so an updated bundled base
replaces the stored copy) or with --rebuild-shared. A real model replaces it by pointing the policy resource at a checkpoint or
an endpoint.
"""

import tempfile
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from ops.checkpoint import Checkpoint
from ops.prompts import PromptStyle
from resources.storage import ArtifactStore
from training.base.bundled import bundled_digest


class BasePolicyConfig(dg.Config):
    source: Literal["bundled", "pretrain"] = Field(default="bundled", description=(
        "'bundled': the checkpoint shipped in training/base/checkpoint (checked against the current prompt "
        "format); 'pretrain': run the same pretraining recipe now."))
    max_steps: int = Field(default=6000, gt=0, description="Optimizer steps when pretraining (the bundled budget).")
    max_seconds: float = Field(default=3600.0, gt=0, description="Wall-clock cap of the pretraining loop.")
    seed: int = Field(default=0, description="Seed of the model init and the synthetic data.")
    eval_samples: int = Field(default=300, ge=0, description="Held-out samples for the accuracy report.")
    context_share: float = Field(default=0.5, ge=0, le=1, description=(
        "Share of click samples turned into episode-context skills (Done list, terminate, critic hints; "
        "training/base/episode_skills.py); 0 trains single-step grounding only."))
    page_share: float = Field(default=0.0, ge=0, le=1, description=(
        "Share of samples that are page actions: open an entry, press a button on its page, confirm, stop "
        "(training/base/page_actions.py)."))


@dg.asset(group_name="learning", code_version=f"base-policy-5+{bundled_digest()}",
          description="Tiny Qwen2-VL policy pretrained on generic grounding data (checkpoint URI + report).")
def base_policy(context: dg.AssetExecutionContext, config: BasePolicyConfig, artifact_store: ArtifactStore) -> Checkpoint:
    from training.base.pretrain import BasePretrainConfig
    from training.base.bundled import BUNDLED_DIR, load_bundled, pretrain_embedded_base

    with tempfile.TemporaryDirectory() as tmp:
        source_dir = BUNDLED_DIR
        if config.source == "pretrain":
            pretrain_config = BasePretrainConfig(max_steps=config.max_steps, max_seconds=config.max_seconds,
                                                 seed=config.seed, eval_samples=config.eval_samples)
            source_dir = Path(tmp) / "base_policy"
            pretrain_embedded_base(
                source_dir, pretrain_config, config.context_share, config.page_share,
                command=f"base_policy asset, run {context.run_id}",
                progress=lambda step, loss, s: context.log.info(f"pretraining step {step}: loss {loss:.3f} ({s:.0f} s)"))
        provenance, report = load_bundled(source_dir)
        uri = artifact_store.put_dir(source_dir, f"base_policy/{context.run_id}")
    version = f"base:{context.run_id[:8]}"
    context.add_output_metadata({
        "uri": uri, "version": version, "source": config.source,
        "click_accuracy": report["click_accuracy"], "click_chance": report["click_chance"],
        "format_valid_rate": report["format_valid_rate"], "steps": report["steps"],
        "train_seconds": round(report["train_seconds"], 1),
        "per_skill": dg.MetadataValue.json(report["per_skill"]),
        "data_seen": dg.MetadataValue.json(report["data_seen"]),
        "provenance": dg.MetadataValue.json(provenance),
    })
    return Checkpoint(version=version, uri=uri, prompt_style=PromptStyle.ELEMENTS, method="base",
                      metrics={"click_accuracy": report["click_accuracy"], "click_chance": report["click_chance"]})
