"""The step samples of each SFT ablation, from the HiFPO step dataset (MobileForge Table 4: the same data)."""

from __future__ import annotations

import polars as pl

from ops.samples.step_samples import with_hint_free_copies

STEP_KEY = ["task_id", "attempt", "step"]


def as_rolled_out(step_samples: pl.DataFrame) -> pl.DataFrame:
    """The kept steps with the prompts the policy saw: the step dataset without the hint-free copies
    `step_datasets.hint_free_copies` adds (a copy is a hint-free row of a step that also has a hinted row)."""
    hinted = step_samples.filter(pl.col("has_hint")).select(STEP_KEY).unique().with_columns(_hinted=pl.lit(True))
    marked = step_samples.join(hinted, on=STEP_KEY, how="left", maintain_order="left")
    return marked.filter(pl.col("has_hint") | pl.col("_hinted").is_null()).drop("_hinted")


def hint_sft_samples(step_samples: pl.DataFrame) -> pl.DataFrame:
    """Hint SFT: every kept step with its hint-contextualized prompt, as rolled out."""
    return as_rolled_out(step_samples)


def no_hint_sft_samples(step_samples: pl.DataFrame, attempts: pl.DataFrame) -> pl.DataFrame:
    """No-hint SFT: every kept step with the prompt it would have had without the hints."""
    rolled_out = as_rolled_out(step_samples)
    return with_hint_free_copies(rolled_out, attempts).filter(~pl.col("has_hint")).sort(STEP_KEY, maintain_order=True)
