"""HiFPO policy optimisation: step-level GRPO on the filtered step samples with the adaptive
GUI action reward (MobileForge §2.4, eq. 16–17 and 22–24; hyperparameters from table 13).

Each sample is one step: the hint-contextualized prompt the policy saw at rollout time plus
its screenshot. GRPO samples G responses per step, scores them with R = λ_type·r_type +
λ_arg·r_arg (ops.judging.action_reward) and optimises the clipped group-relative objective with a KL term.
The reward config's other components (type, argument and format scores, and MobileWizard's
structure and reasoning rewards when `reward_options` turns them on) are passed to TRL as extra
reward functions of weight 0, so each is logged per step beside R without changing the optimised
reward (which already holds w1·R_format + w2·R_reasoning, MobileWizard eq. 3). The reasoning reward
compares each generated part with the step's annotation under a sentence embedder: the packaged
all-MiniLM-L6-v2 unless `embedder` names another model or the caller passes one; step samples
without annotations are dropped before training, and counted. With `history_alignment` set,
training runs in rounds with MobileWizard's history self-alignment (§3.4.3,
`training.methods.hifpo.history_alignment_rounds`). Given remedial rows (MobileWizard §3.4.4, App. B), one more epoch
of the same GRPO training follows on the training set supplemented by them (`with_remedial_epoch`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from datasets import Dataset, concatenate_datasets
from transformers import ProcessorMixin, Trainer
from trl import GRPOConfig, GRPOTrainer

from ops.judging.reasoning_reward import Embedder
from ops.judging.action_reward import STRUCTURED_FORMAT
from ops.judging.reward_columns import ANNOTATION_COLUMNS, make_trl_reward
from training.methods.hifpo.history_alignment_rounds import (
    HistoryAlignment,
    hold_out_validation,
    round_budgets,
    without_alignment,
)
from training.methods.hifpo.config import HiFPOConfig
from training.trainers.lora import peft_config
from training.trainers.runs import (
    PreparedRun,
    TrainOutcome,
    TrainProgress,
    TrainReport,
    chained,
    drop_overlong,
    load_processor,
    require_local_checkpoint,
    resolve_dataset,
    single_run,
    train_again,
    train_and_save,
)
from training.trainers.step_datasets import dataset_fingerprint

log = logging.getLogger(__name__)

# Curve name -> TRL log key, besides one curve per reward component (named after the
# component). `reward` is what GRPO optimised (= overall with the weights below).
TRAINER_CURVES: dict[str, str] = {
    "reward": "reward",
    "reward_std": "reward_std",
    "zero_variance_groups": "frac_reward_zero_std",  # groups whose G completions all score alike: no gradient
    "kl": "kl",
    "loss": "loss",
    "completion_length": "completions/mean_length",
}
# MobileWizard App. B: "Finally, we incorporated remedial data and conducted one more training epoch"
REMEDIAL_EPOCH_BUDGET: dict[str, Any] = {"max_steps": -1, "num_train_epochs": 1.0}




def load_embedder(model_dir: str | None) -> Embedder:
    """The reasoning reward's sentence embedder: `model_dir`, else the packaged all-MiniLM-L6-v2."""
    from training.models.sentence_embedder import SentenceEmbedder, packaged_minilm

    return packaged_minilm() if model_dir is None else SentenceEmbedder(model_dir)


def drop_unannotated(dataset: Dataset) -> tuple[Dataset, int]:
    """`dataset` without the step samples that lack any of the four reasoning targets (the reasoning
    reward has nothing to compare their parts with), and how many were dropped."""
    present = [c for c in ANNOTATION_COLUMNS if c in dataset.column_names]
    if len(present) < len(ANNOTATION_COLUMNS):
        return dataset.select([]), len(dataset)
    kept = dataset.filter(lambda *cells: all(isinstance(c, str) and c.strip() for c in cells), input_columns=present)
    return kept, len(dataset) - len(kept)


def reads_annotations(config: HiFPOConfig) -> bool:
    """Whether the run reads the step samples' reasoning annotations (the reasoning reward, history alignment)."""
    return config.reward_config().reasoning_weight is not None or config.history_alignment is not None


def trainable_rows(data: Dataset, processor: ProcessorMixin, config: HiFPOConfig) -> tuple[Dataset, dict[str, int]]:
    """The step samples of `data` GRPO can train on, and how many were dropped by reason: without the
    completion column (GRPO samples its own responses; it would also confuse TRL's format check), without
    the samples lacking reasoning annotations when the run reads them, and without overlong prompts."""
    rows = data.remove_columns([c for c in ("completion",) if c in data.column_names])
    dropped: dict[str, int] = {}
    if reads_annotations(config):
        rows, dropped["no_reasoning_annotation"] = drop_unannotated(rows)
    rows, dropped["prompt_too_long"] = drop_overlong(rows, processor, config.max_prompt_length)
    return rows, dropped


def with_remedial_epoch(train: Callable[[Trainer], TrainOutcome], remedial: Dataset, step_columns: list[str],
                        processor: ProcessorMixin, config: HiFPOConfig) -> Callable[[Trainer], TrainOutcome]:
    """`train`, then MobileWizard's last epoch (§3.4.4, App. B): one more epoch of the same GRPO training (the same
    trainer: weights, optimizer state and KL reference carry over, as between history-alignment rounds) on the
    training set as `train` left it (after the last alignment round, with its realigned prompts) supplemented by
    the trainable `remedial` rows (`step_columns`: the training set's columns, which they must share). The record
    is `details["remedial_epoch"]`: rows added, dropped by reason, the epoch's optimizer steps; without a remedial
    row left to add, `train` alone and the reason (`skipped`)."""
    if len(remedial) == 0:
        return _without_remedial_epoch(train, "no remedial rows")
    rows, dropped = trainable_rows(remedial, processor, config)
    if len(rows) == 0:
        return _without_remedial_epoch(train, f"all {len(remedial)} remedial rows dropped: {dropped}")
    if set(rows.column_names) != set(step_columns):  # e.g. a screenshot in one and not the other
        raise ValueError(f"the remedial rows have the columns {sorted(rows.column_names)}, the step samples "
                         f"{sorted(step_columns)}: both must come from one prompt style")

    def run(trainer: Trainer) -> TrainOutcome:
        outcome = train(trainer)
        step_rows = len(trainer.train_dataset)
        # "the training data supplemented by 300 remedial trajectories" (MobileWizard §4.3, ablation (d)):
        # the step samples and the remedial rows together, not the remedial rows alone
        trainer.train_dataset = concatenate_datasets([trainer.train_dataset, rows])
        final = train_again(trainer, REMEDIAL_EPOCH_BUDGET)
        record = {"rows_added": len(rows), "step_rows": step_rows, "steps": final.global_step, "dropped": dropped,
                  "remedial_fingerprint": dataset_fingerprint(remedial)}
        log.info("remedial epoch: %d step samples + %d remedial rows, %d optimizer steps", step_rows, len(rows),
                 final.global_step)
        return chained(outcome, replace(final, details={"remedial_epoch": record}))
    return run


def _without_remedial_epoch(train: Callable[[Trainer], TrainOutcome], reason: str
                            ) -> Callable[[Trainer], TrainOutcome]:
    def run(trainer: Trainer) -> TrainOutcome:
        log.warning("remedial epoch skipped: %s; training on the step samples only", reason)
        outcome = train(trainer)
        return replace(outcome, details=outcome.details | {"remedial_epoch": {"skipped": reason}})
    return run


def prepare_hifpo(
    base_checkpoint: str | Path, dataset: Dataset | str | Path, out_dir: str | Path, config: HiFPOConfig,
    *, embed: Embedder | None = None, remedial: Dataset | None = None,
) -> PreparedRun:
    """Load the processor, filter overlong (and, with the reasoning reward or history alignment,
    unannotated) step samples and build the GRPOTrainer (no training); with history alignment, hold out
    its validation trajectories and train in rounds (`PreparedRun.train`). `embed` scores the reasoning reward and
    compares alignment candidates (default: `load_embedder(config.embedder)`, loaded only when one is on).
    `remedial` (step samples of remedial trajectories; None: off) adds the final epoch of `with_remedial_epoch`;
    an empty dataset trains as None does and records why."""
    if config.history_alignment is not None and config.action_format != STRUCTURED_FORMAT:
        raise ValueError(f"history_alignment rebuilds the memory of the {STRUCTURED_FORMAT!r} format's prompts; the "
                         f"action format is {config.action_format!r}")
    base = require_local_checkpoint(base_checkpoint)
    lora = peft_config(config.lora, base)  # checked before any data or weights are loaded
    data, data_path = resolve_dataset(dataset)
    processor = load_processor(base, image_max_pixels=config.image_max_pixels)
    reward_config = config.reward_config()
    train, dropped = trainable_rows(data, processor, config)
    if dropped.get("no_reasoning_annotation") == len(data):
        raise ValueError("no step sample has the four reasoning annotations (target_<part> columns) that "
                         "reward_options.reasoning_weight compares with and history_alignment keeps as labels; "
                         "annotate the step dataset first")
    if len(train) == 0:
        raise ValueError(f"every step sample is longer than max_prompt_length={config.max_prompt_length}")
    if reads_annotations(config):
        embed = embed if embed is not None else load_embedder(config.embedder)
    rounds = None
    if config.history_alignment is not None:
        split = hold_out_validation(train, config.history_alignment, config.seed)
        if isinstance(split, str):
            rounds = without_alignment(split)
        else:
            train, validation = split
            rounds = HistoryAlignment(
                config.history_alignment, validation, reward_config, config.action_format, embed, processor,
                config.max_completion_length, config.top_p, config.max_prompt_length,
                round_budgets(config.history_alignment.rounds, config.max_steps, config.num_train_epochs),
                config.seed).train
    rewards = {c: make_trl_reward(config.action_format, reward_config, c, embed=embed)
               for c in reward_config.components()}
    trainer = GRPOTrainer(
        # A path (not a loaded model): with beta > 0 TRL builds the reference model from it.
        model=str(base),
        reward_funcs=list(rewards.values()),
        args=GRPOConfig(**config.grpo_kwargs(Path(out_dir))),  # TRL's checks: bf16 needs a GPU, batches fit G
        train_dataset=train,
        processing_class=processor,
        peft_config=lora,  # with LoRA, the reference is the model with its adapter off
    )
    # TRL logs each reward function's batch mean under its __name__.
    curves = {c: f"rewards/{f.__name__}/mean" for c, f in rewards.items()} | TRAINER_CURVES
    if remedial is not None:
        rounds = with_remedial_epoch(rounds or single_run, remedial, train.column_names, processor, config)
    return PreparedRun(trainer, base, data, data_path, len(train), dropped, curves, rounds)


def train_hifpo(
    base_checkpoint: str | Path, dataset: Dataset | str | Path, out_dir: str | Path, config: HiFPOConfig,
    *, progress: Callable[[TrainProgress], None] | None = None, embed: Embedder | None = None,
    remedial: Dataset | None = None,
) -> TrainReport:
    """Step-level GRPO from `base_checkpoint` on a step dataset (or its saved path); saves the
    trained model, processor and `manifest.json` to `out_dir`. Curves: one per reward component
    (overall / type / arg / format, and structure / reasoning when on), reward std, KL, loss,
    completion length per logged step; with history alignment also `validation_reward` per round, and
    its record in `TrainReport.details["history_alignment"]`; with `remedial`, the final epoch's record in
    `details["remedial_epoch"]`. `embed`, `remedial`: see `prepare_hifpo`."""
    out = Path(out_dir)
    return train_and_save(
        prepare_hifpo(base_checkpoint, dataset, out, config, embed=embed, remedial=remedial), method="hifpo",
        out_dir=out, config=config, progress=progress,
    )
