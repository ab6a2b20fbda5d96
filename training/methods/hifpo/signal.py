"""HiFPO's reward signal measured outside training: G responses per step prompt sampled and scored by the
GRPOTrainer `prepare_hifpo` builds (its prompt rendering, generation settings and reward functions), the share
of groups whose G rewards are all alike (they give GRPO no gradient), and the k3 KL of a trained policy's
responses against a reference (TRL's per-token estimator exp(r) − r − 1, r = log p_ref − log p_policy).
`benchmarks/hifpo_signal.py` runs it on a stored experiment and prints the tables.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import torch
from datasets import Dataset
from trl import GRPOTrainer

from ops.judging.reward_columns import completion_text, target_from_column
from training.threads import torch_threads
from training.methods.hifpo.trainer import prepare_hifpo
from training.methods.hifpo.config import HiFPOConfig
from training.trainers.logprob_tiles import tiles_fitting

# the multimodal inputs TRL's forward pass takes from a generated batch (GRPOTrainer._compute_loss, TRL 1.16)
FORWARD_KEYS = ("pixel_values", "image_grid_thw", "num_images", "pixel_attention_mask", "spatial_shapes",
                "num_tiles", "image_sizes", "token_type_ids", "mm_token_type_ids", "image_position_ids")
ZERO_STD = 1e-8  # TRL counts a group as zero-variance by torch.isclose(std, 0): |std| <= 1e-8


def prompts_per_round(config: HiFPOConfig) -> int:
    """Step prompts GRPO generates responses for at once (per device): its generation batch over G."""
    responses = config.per_device_train_batch_size * (config.steps_per_generation or config.gradient_accumulation_steps)
    return responses // config.num_generations


def with_generations(config: HiFPOConfig, generations: int) -> HiFPOConfig:
    """`config` sampling `generations` responses per prompt for as many prompts per generation round (one
    optimizer micro-step per round)."""
    return type(config).model_validate(config.model_dump() | {
        "num_generations": generations, "steps_per_generation": 1,
        "per_device_train_batch_size": prompts_per_round(config) * generations})


def draw_prompts(rows: Dataset, count: int, seed: int) -> Dataset:
    """`count` step samples of `rows` drawn without replacement from `seed` (all of them when fewer)."""
    if count < 1:
        raise ValueError(f"count: at least one step prompt, got {count}")
    picked = random.Random(seed).sample(range(len(rows)), min(count, len(rows)))
    return rows.select(picked)


class _RecordedRewards:
    """The trainer's reward functions wrapped so each call's scores (by component name) and the response texts
    they scored stay readable."""

    def __init__(self, trainer: GRPOTrainer) -> None:
        self.scores: dict[str, list[float]] = {}
        self.texts: list[str] = []
        trainer.reward_funcs = [self._wrap(f) for f in trainer.reward_funcs]

    def _wrap(self, reward: Callable[..., list[float]]) -> Callable[..., list[float]]:
        def recorded(**kwargs: Any) -> list[float]:
            self.scores[reward.__name__] = scores = reward(**kwargs)
            self.texts = [completion_text(c) for c in kwargs["completions"]]
            return scores
        recorded.__name__ = reward.__name__
        return recorded


def _logps(trainer: GRPOTrainer, model: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
    """Per-token log-probabilities of the batch's completions under `model`, as TRL's loss computes them."""
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(
            model, ids, mask, batch["completion_ids"].size(1), **{k: batch[k] for k in FORWARD_KEYS if k in batch})
    return logps


def sample_groups(checkpoint: str | Path, prompts: Dataset, config: HiFPOConfig, *,
                  reference: torch.nn.Module | None = None, seed: int = 0) -> tuple[pl.DataFrame, GRPOTrainer]:
    """One row per sampled response: `num_generations` responses to each step prompt of `prompts`, generated
    and scored by HiFPO's GRPOTrainer on `checkpoint`, as many prompts at once as one of its generation rounds
    takes. Columns: `prompt` (row of the prompts kept), `target_type`, `has_hint`, `response` (the text the
    reward scored), one per reward component (overall, type, arg, format, ...), `advantage` (GRPO's), `tokens`
    (response tokens) and, given a `reference` model, `kl_sum` (the response's summed per-token k3 KL against
    it). Prompts `prepare_hifpo` drops (overlong) are left out. Also returns the trainer (its `model` can be the
    next call's reference)."""
    # beta only adds the KL term to the loss; 0 spares loading a reference that generation and reward never use
    settings = config.model_copy(update={"beta": 0.0, "report_to": []})
    group = settings.num_generations
    with tempfile.TemporaryDirectory() as out, torch_threads(settings.torch_threads):
        trainer = prepare_hifpo(checkpoint, prompts, Path(out) / "signal", settings).trainer
        rewards = _RecordedRewards(trainer)
        trainer.model.train()  # the mode GRPO generates in (TRL picks its train-mode batch and group sizes by it)
        torch.manual_seed(seed)
        rows, per_batch = trainer.train_dataset, prompts_per_round(settings)
        records: list[dict[str, Any]] = []
        with tiles_fitting(trainer.model):
            for start in range(0, len(rows), per_batch):
                batch_rows = [rows[i] for i in range(start, min(start + per_batch, len(rows)))]
                batch = trainer._generate_and_score_completions([r for r in batch_rows for _ in range(group)])
                records += _records(batch_rows, start, group, batch, rewards,
                                    _kl_sums(trainer, reference, batch) if reference is not None else None)
        trainer.model.eval()
    return pl.DataFrame(records), trainer


def _kl_sums(trainer: GRPOTrainer, reference: torch.nn.Module, batch: dict[str, Any]) -> list[float]:
    policy, ref = _logps(trainer, trainer.model, batch), _logps(trainer, reference, batch)
    r = ref - policy
    per_token = (torch.exp(r) - r - 1) * batch["completion_mask"]
    return per_token.sum(dim=1).tolist()


def _records(batch_rows: Sequence[dict[str, Any]], start: int, group: int, batch: dict[str, Any],
             rewards: _RecordedRewards, kl_sums: list[float] | None) -> list[dict[str, Any]]:
    tokens = batch["completion_mask"].sum(dim=1).tolist()
    advantages = batch["advantages"].tolist()
    out = []
    for k in range(len(batch_rows) * group):
        row = batch_rows[k // group]
        record = {"prompt": start + k // group, "target_type": target_from_column(row["target_action"]).type.value,
                  "has_hint": row.get("has_hint"),
                  "response": rewards.texts[k],
                  **{name.removeprefix("gui_action_"): values[k] for name, values in rewards.scores.items()},
                  "advantage": advantages[k], "tokens": tokens[k]}
        if kl_sums is not None:
            record["kl_sum"] = kl_sums[k]
        out.append(record)
    return out


def measure_signal(checkpoints: Sequence[tuple[str, str | Path]], prompts: Dataset, config: HiFPOConfig,
                   *, seed: int = 0) -> pl.DataFrame:
    """`sample_groups` for each (name, checkpoint directory), with the same prompts and sampling seed; every
    checkpoint after the first also carries `kl_sum` against the first (the base). One frame, `checkpoint` column
    first."""
    if not checkpoints:
        raise ValueError("checkpoints: give at least one")
    frames, reference = [], None
    for name, path in checkpoints:
        frame, trainer = sample_groups(path, prompts, config, reference=reference, seed=seed)
        frames.append(frame.select(pl.lit(name).alias("checkpoint"), pl.all()))
        reference = reference if reference is not None else trainer.model
    return pl.concat(frames, how="diagonal_relaxed")


# ------------------------------------------------------------------ tables


def _in_checkpoint_order(samples: pl.DataFrame, table: pl.DataFrame, *then: str | pl.Expr) -> pl.DataFrame:
    """`table` sorted by the order checkpoints first appear in `samples`, then by `then`."""
    order = samples.select(pl.col("checkpoint").unique(maintain_order=True)).with_row_index("_order")
    return order.join(table, on="checkpoint").sort("_order", *then).drop("_order")


def _by(frame: pl.DataFrame, column: str, aggregations: Sequence[pl.Expr]) -> pl.DataFrame:
    """`aggregations` per checkpoint and value of `column` (as text), after an `all` row per checkpoint."""
    frame = frame.with_columns(pl.col(column).cast(pl.String))
    per_value = frame.group_by("checkpoint", column).agg(*aggregations)
    overall = frame.group_by("checkpoint").agg(*aggregations).with_columns(pl.lit("all").alias(column))
    table = pl.concat([overall.select(per_value.columns), per_value])
    return _in_checkpoint_order(frame, table, pl.col(column) != "all", column)


def group_table(samples: pl.DataFrame, ceiling: float, by: str = "target_type") -> pl.DataFrame:
    """Per checkpoint and value of `by` (a column constant within a group): step prompts (groups), the mean
    number of different responses in a group, the share whose G rewards are all alike (`zero_variance`), and
    within it the shares all 0 (`all_zero`) and all `ceiling` (`all_full`)."""
    groups = samples.group_by("checkpoint", "prompt", by, maintain_order=True).agg(
        std=pl.col("overall").std(), low=pl.col("overall").min(), high=pl.col("overall").max(),
        distinct=pl.col("response").n_unique())
    groups = groups.with_columns(alike=pl.col("std").fill_null(0.0) <= ZERO_STD)
    return _by(groups, by, [
        pl.len().alias("groups"),
        pl.col("distinct").mean().alias("distinct_responses"),
        pl.col("alike").mean().alias("zero_variance"),
        (pl.col("alike") & (pl.col("high") <= ZERO_STD)).mean().alias("all_zero"),
        (pl.col("alike") & (pl.col("low") >= ceiling - 1e-6)).mean().alias("all_full"),
    ])


def reward_table(samples: pl.DataFrame, by: str = "target_type") -> pl.DataFrame:
    """Per checkpoint and value of `by`: responses, the mean of each reward component and of response tokens."""
    components = [c for c in ("overall", "type", "arg", "format", "structure", "reasoning") if c in samples.columns]
    return _by(samples, by, [pl.len().alias("responses"), *[pl.col(c).mean() for c in components],
                             pl.col("tokens").mean().alias("mean_tokens")])


def kl_table(samples: pl.DataFrame, by: str = "target_type") -> pl.DataFrame | None:
    """Per checkpoint measured against the reference and value of `by`: response tokens and the mean per-token
    k3 KL (summed over every response token, divided by their number, as TRL's logged `kl`); None when no
    checkpoint was (one checkpoint measured)."""
    if "kl_sum" not in samples.columns:
        return None
    return _by(samples.filter(pl.col("kl_sum").is_not_null()), by,
               [pl.col("tokens").sum().alias("tokens"),
                (pl.col("kl_sum").sum() / pl.col("tokens").sum()).alias("kl_per_token")])
