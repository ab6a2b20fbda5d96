"""benchmark_results: Pass@k of the base and adapted policies on held-out simulator tasks."""

import base64
import io
from typing import Literal

import dagster as dg
import polars as pl
from PIL import Image, ImageDraw
from pydantic import Field, model_validator

from assets.metadata import md_table
from ops.benchmark import MINED_SEEDS, first_apps, held_out_tasks, pass_at_k, unseen_train_tasks, versus_baseline
from ops.checkpoint import Checkpoint
from ops.evaluation import evaluate_policy
from resources.experiment import experiment_of, experiment_partitions, lineage_metadata
from resources.environment import SimulatorResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation


class BenchmarkConfig(dg.Config):
    split: Literal["test", "train"] = Field(default="test", description=(
        "'test': the held-out templates, never mined; 'train': the curriculum's own templates at instances it "
        "never mined (seeds from first_seed up, minus instances whose parameters repeat a mined one), to tell "
        "'learned nothing' from 'does not transfer'. RFT rounds 2+ train on variants at seeds from "
        "rft_checkpoint.variant_seed_offset up: keep first_seed + seeds_per_template below it."))
    first_seed: int = Field(default=0, ge=0, description=(
        f"First template seed; with split 'train' at least {MINED_SEEDS} (the seeds the curriculum tries)."))
    k: int = Field(default=3, ge=1, description="Attempts per task: reports Pass@1..k.")
    seeds_per_template: int = Field(default=1, ge=1, description="Parameter seeds per held-out template.")
    max_templates: int | None = Field(default=None, ge=1, description="Evaluate only the first N test templates.")
    temperature: float = Field(default=0.7, ge=0, description="Sampling temperature, so the k attempts differ.")
    seed: int = Field(default=0, description="Sampling seed of the local policies.")
    max_parallel_episodes: int = Field(default=64, ge=1, description=(
        "Episodes stepped together (a local policy answers them in length-sorted chunks)."))

    @model_validator(mode="after")
    def _unseen_instances(self) -> "BenchmarkConfig":
        if self.split == "train" and self.first_seed < MINED_SEEDS:
            raise ValueError(f"benchmark_results.first_seed: {self.first_seed} with split 'train' would evaluate "
                             f"instances the curriculum mines; use {MINED_SEEDS} or more")
        return self


def bar_chart(table: pl.DataFrame, metric: str) -> str:
    """A small PNG bar chart (markdown data URL) of `metric` per policy."""
    rows = table.filter(pl.col("difficulty") == "all").sort("policy_id")
    w, h, pad = 80 * max(1, rows.height) + 40, 180, 20
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    for i, r in enumerate(rows.iter_rows(named=True)):
        x = pad + i * 80
        bar = int((h - 60) * r[metric])
        d.rectangle((x, h - 30 - bar, x + 50, h - 30), fill=(66, 133, 244))
        d.text((x, h - 25), r["policy_id"][:10], fill="black")
        d.text((x, h - 45 - bar), f"{r[metric]:.2f}", fill="black")
    d.text((pad, 4), metric, fill="black")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return f"![{metric}](data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()})"


def versus_md(versus: pl.DataFrame, k: int) -> dg.MetadataValue:
    """The paired comparison with the base (`versus_baseline` at Pass@k) as a markdown table."""
    k_col = f"pass@{k}"
    return md_table(["policy", "tasks passed", k_col, "95% CI", "gained", "lost", "sign test p"],
                    [(r["policy_id"], r["passed"], f"{r[k_col]:.3f}", f"{r['ci_low']:.3f}-{r['ci_high']:.3f}",
                      r["gained"], r["lost"], f"{r['p_value']:.3f}") for r in versus.iter_rows(named=True)])


@dg.asset(partitions_def=experiment_partitions, group_name="evaluation", code_version="benchmark-6",
          description="Pass@k on held-out templates (or unseen instances of the curriculum's), progress, false-complete, side-effect, overdue and first-app-right rates per policy.")
def benchmark_results(context: dg.AssetExecutionContext, config: BenchmarkConfig, base_policy: Checkpoint,
                      hifpo_checkpoint: Checkpoint, rft_checkpoint: Checkpoint, grsd_checkpoint: Checkpoint,
                      simulator: SimulatorResource, policy: PolicyResource, storage: StorageLocation,
                      artifact_store: ArtifactStore) -> pl.DataFrame:
    tasks = (held_out_tasks(config.seeds_per_template, config.max_templates, simulator.world_seed, config.first_seed)
             if config.split == "test" else
             unseen_train_tasks(config.seeds_per_template, config.first_seed, config.max_templates, simulator.world_seed))
    specs = [t for t, _ in tasks]
    candidates = {"base": base_policy, "hifpo": hifpo_checkpoint, "rft": rft_checkpoint, "grsd": grsd_checkpoint}
    expected_apps = first_apps(specs, simulator.world_seed)
    evaluated: dict[str, pl.DataFrame] = {}  # checkpoint URI -> its episodes (untrained methods reuse the base's)
    frames = []
    for name, checkpoint in candidates.items():
        if checkpoint.uri not in evaluated:
            agent = policy.acting_policy(checkpoint, artifact_store, temperature=config.temperature, seed=config.seed)
            evaluation = evaluate_policy(name, agent, tasks, simulator.make_env,
                                         storage.attempt_store(experiment_of(context), f"benchmark/{name}"),
                                         config.k, expected_apps, config.max_parallel_episodes)
            context.log.info(f"benchmark {name}: {evaluation.summary.attempts_run} episodes run, "
                             f"{evaluation.summary.attempts_resumed} resumed")
            evaluated[checkpoint.uri] = evaluation.results
        frames.append(evaluated[checkpoint.uri].with_columns(pl.lit(name).alias("policy_id")))
    results = pl.concat(frames)
    table = pass_at_k(results, config.k)
    overall = table.filter(pl.col("difficulty") == "all")
    metric_cols = [c for c in table.columns if c not in ("policy_id", "difficulty")]
    context.add_output_metadata({
        **lineage_metadata(context, config), "episodes": results.height, "tasks": len(specs), "split": config.split,
        "comparison": md_table(["policy", *metric_cols],
                               [(r["policy_id"], *[f"{r[c]:.3f}" if isinstance(r[c], float) else r[c]
                                                   for c in metric_cols]) for r in overall.iter_rows(named=True)]),
        "by_difficulty": md_table(table.columns, table.rows()),
        "versus_base": versus_md(versus_baseline(results, config.k), config.k),
        f"pass@{config.k}_plot": dg.MetadataValue.md(bar_chart(table, f"pass@{config.k}")),
    })
    return results
