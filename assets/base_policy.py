"""base_policy: the embedded starting policy, pretrained on generic grounding data and reused.

It never sees curriculum or benchmark tasks: only generic instructions like "tap X", "type Y",
"go back", "scroll", "open app Z" on synthetic screens and on simulator screens reached by
random walks (training/base/grounding_data.py, training/base/sim_grounding.py), some with an episode
context: earlier steps to read, when to terminate, critic hints to follow
(training/base/episode_skills.py). By default it is the bundled result of one step-budgeted run of
that recipe (training/base/bundled.py explains why); `source: pretrain` reruns it.

That tiny model is only the default: the policy resource's `checkpoint` (a model directory, or the
weights a configured endpoint serves) makes the user's model the base every stage of the
experiment rolls out, trains and benchmarks. Each experiment records its own base, so experiments
with different models sit side by side.
"""

import tempfile
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from assets.metadata import tidy
from ops.config_bounds import MAX_COUNT, MAX_SECONDS, MAX_SEED
from training.methods.checkpoint import Checkpoint, weights_digest
from ops.agent.policy_prompt import PromptStyle
from resources.experiment import experiment_of, experiment_partitions
from resources.policy import PolicyResource
from resources.storage import ArtifactStore
from training.base.bundled import bundled_digest


class BasePolicyConfig(dg.Config):
    source: Literal["bundled", "pretrain"] = Field(default="bundled", description=(
        "'bundled': the checkpoint shipped in training/base/checkpoint (checked against the current prompt "
        "format); 'pretrain': run the same pretraining recipe now."))
    max_steps: int = Field(default=6000, gt=0, le=MAX_COUNT, description="Optimizer steps when pretraining (the bundled budget).")
    max_seconds: float = Field(default=3600.0, gt=0, le=MAX_SECONDS, description="Wall-clock cap of the pretraining loop.")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Seed of the model init and the synthetic data.")
    eval_samples: int = Field(default=300, ge=0, le=MAX_COUNT, description="Held-out samples for the accuracy report.")
    context_share: float = Field(default=0.5, ge=0, le=1, description=(
        "Share of click samples turned into episode-context skills (Done list, terminate, critic hints; "
        "training/base/episode_skills.py); 0 trains single-step grounding only."))
    page_share: float = Field(default=0.0, ge=0, le=1, description=(
        "Share of samples that are page actions: open an entry, press a button on its page, confirm, stop "
        "(training/base/page_actions.py)."))


@dg.asset(partitions_def=experiment_partitions, group_name="policy", code_version=f"base-policy-7+{bundled_digest()}",
          description="One checkpoint (not a table): the policy this experiment adapts, the configured model "
                      "or else the bundled tiny base.")
def base_policy(context: dg.AssetExecutionContext, config: BasePolicyConfig, policy: PolicyResource,
                artifact_store: ArtifactStore) -> Checkpoint:
    configured = policy.configured_weights()
    if configured is not None:
        digest = weights_digest(configured)
        checkpoint = Checkpoint(version=f"base:{digest}", uri=f"file://{configured}",
                                prompt_style=PromptStyle(policy.prompt_style), method="base")
        context.add_output_metadata({"source": "configured", "weights": str(configured), "weights_digest": digest,
                                     "version": checkpoint.version})
        return checkpoint
    if policy.kind == "endpoint":
        context.log.warning(f"policy.checkpoint is not set: the served model {policy.model} is rolled out and "
                            "benchmarked, but the trainers have no weights to start from")
        context.add_output_metadata({"source": "endpoint", "model": policy.model or ""})
        return Checkpoint(version=f"base:endpoint:{policy.model}", uri=None,
                          prompt_style=PromptStyle(policy.prompt_style), method="base")
    return _embedded_base(context, config, artifact_store, PromptStyle(policy.prompt_style))


def _embedded_base(context: dg.AssetExecutionContext, config: BasePolicyConfig,
                   artifact_store: ArtifactStore, style: PromptStyle) -> Checkpoint:
    """The bundled tiny base (or a fresh run of its pretraining recipe), stored for this experiment
    and run with the configured prompt style. It learned only the element-list style: in another
    (e.g. the `wizard` experiment's structured reasoning) it is a stand-in that lets every stage run,
    and most of its outputs are invalid steps, counted where they occur."""
    from training.base.bundled import BUNDLED_DIR, load_bundled, pretrain_embedded_base

    if style != PromptStyle.ELEMENTS:
        context.log.warning(f"the embedded tiny base was pretrained on {PromptStyle.ELEMENTS.value!r} prompts only; it "
                            f"runs here with {style.value!r} prompts, which it never learned (expect invalid outputs)")
    with tempfile.TemporaryDirectory() as tmp:
        source_dir = BUNDLED_DIR
        if config.source == "pretrain":
            from training.base.pretrain import BasePretrainConfig  # torch and transformers: ~4 CPU s, bundled needs neither

            pretrain_config = BasePretrainConfig(max_steps=config.max_steps, max_seconds=config.max_seconds,
                                                 seed=config.seed, eval_samples=config.eval_samples)
            source_dir = Path(tmp) / "base_policy"
            pretrain_embedded_base(
                source_dir, pretrain_config, config.context_share, config.page_share,
                command=f"base_policy asset, run {context.run_id}",
                progress=lambda step, loss, s: context.log.info(f"pretraining step {step}: loss {loss:.3f} ({s:.0f} s)"))
        provenance, report = load_bundled(source_dir)
        digest = weights_digest(source_dir)
        uri = artifact_store.put_dir(source_dir, f"{experiment_of(context)}/base_policy/{digest}")
    # the same weights prompted in another style are another policy: its attempts must not resume these
    version = f"base:{digest}" + ("" if style == PromptStyle.ELEMENTS else f"+{style.value}")
    context.add_output_metadata(tidy({
        "weights": uri, "version": version, "source": config.source, "weights_digest": digest,
        "prompt_style": style.value, "pretrained_style": PromptStyle.ELEMENTS.value,
        "click_accuracy": report["click_accuracy"], "click_chance": report["click_chance"],
        "format_valid_rate": report["format_valid_rate"], "steps": report["steps"],
        "train_seconds": report["train_seconds"],
        "per_skill": dg.MetadataValue.json(report["per_skill"]),
        "data_seen": dg.MetadataValue.json(report["data_seen"]),
        "provenance": dg.MetadataValue.json(provenance),
    }))
    return Checkpoint(version=version, uri=uri, prompt_style=style, method="base",
                      metrics={"click_accuracy": report["click_accuracy"], "click_chance": report["click_chance"]})
