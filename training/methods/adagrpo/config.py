"""AdaGRPO's settings (MobileRL table 5), loaded without torch."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from training.trainers.settings import TrainSettings


class AdaGRPOConfig(TrainSettings):
    """AdaGRPO settings; defaults follow MobileRL table 5 where it applies, `cpu_tiny()` is the
    small CPU budget of the default run. Each of SPA, AdaPR and FCF can be switched off for ablation."""

    # The embedded CPU preset, the default run's budget on 2 shared cores: 4 epochs of 8 tasks x G = 4
    # episodes with the tiny model (about two minutes on one thread); longer runs via --set overrides.
    # The learning rate is the tiny base's pretraining scale, as for HiFPO's preset (1e-6 leaves its
    # weights unchanged).
    CPU_TINY: ClassVar[dict[str, Any]] = {**TrainSettings.CPU_TINY, "epochs": 4, "tasks_per_epoch": 8,
                                          "group_size": 4, "learning_rate": 2e-4, "per_device_train_batch_size": 16}


    # --- budget
    epochs: int = Field(20, ge=1, description="Rollout-then-update epochs.")
    tasks_per_epoch: int = Field(16, ge=1, description="Template tasks (fresh seeds) drawn per epoch.")
    group_size: int = Field(16, ge=2, description="G: episodes per task, from one snapshot (table 5: n = 16).")
    max_parallel_episodes: int = Field(64, ge=1, description="Episodes stepped together in one policy batch.")
    temperature: float = Field(1.0, gt=0, description="Sampling temperature of the episodes (table 5: 1.0).")
    cpu_seconds_budget: float | None = Field(None, gt=0, description=(
        "Stop after the first epoch by whose end training used this many CPU seconds (this process and its "
        "finished children, ops.evaluation.cpu_clock); `epochs` is then an upper bound, and also the learning-rate "
        "schedule's horizon. None: run every epoch. For comparisons at equal cost, e.g. with HiFPO's cpu_seconds."))
    seed_offset: int = Field(5000, ge=0, description=(
        "Template seeds are seed_offset + epoch (epochs counted over every run of the failure history), away "
        "from the seeds the curriculum mines, the benchmark's and RFT's variants."))
    # --- reward
    reward: Literal["outcome", "shaped"] = Field("outcome", description=(
        "'outcome': the judge's binary success (MobileRL); 'shaped': MobileGym appendix G's progress-shaped "
        "reward (phonesim.metrics.shaped_reward), partial credit for failed trajectories."))
    spa: bool = Field(True, description="Shortest-path reward adjustment (MobileRL eq. 2).")
    spa_alpha: float = Field(1.0, gt=0, le=1, description="SPA's α (table 5: 1.0).")
    structure_weight: float | None = Field(None, ge=0, description=(
        "w1 of MobileWizard's format reward (§3.4.2, eq. 3), the mean over the episode's responses added to the "
        "outcome (ops.judging.episode_reasoning_reward); None leaves it out, 0 logs it only. Needs the mobilewizard style."))
    reasoning_weight: float | None = Field(None, ge=0, description=(
        "w2 of MobileWizard's reasoning reward: the mean over the episode's steps of each response's similarity "
        "to the programmatic annotation of that step (ops.judging.episode_reasoning_reward); None leaves it out, 0 logs "
        "it only. Needs the mobilewizard style and an embedder."))
    embedder: str | None = Field(None, description=(
        "Sentence-transformers model directory of the reasoning reward; None: the packaged all-MiniLM-L6-v2."))
    # --- AdaPR
    adapr: bool = Field(True, description="Difficulty-adaptive positive replay (MobileRL §2.2.2).")
    replay_capacity: int = Field(256, ge=1, description="Replay buffer size (table 5: 256).")
    replay_kappa: float = Field(0.25, gt=0, le=1, description="κ: fraction of each rollout set admitted (table 5: 0.25).")
    replay_gamma: float = Field(1.0, ge=0, le=1, description="γ: at most γ·M replayed trajectories per update (table 5: 1.0).")
    replay_from: Literal["earlier_epochs", "same_epoch"] = Field("earlier_epochs", description=(
        "Which successes an update may replay. 'earlier_epochs' (MobileRL §2.2.2 as we read it): an update mixes "
        "this epoch's on-policy trajectories with what earlier epochs admitted, then this epoch's top-κ go in; the "
        "buffer is empty at the first update and fills over epochs (figure 3(b): AdaPR helps 'once the replay buffer "
        "is populated'). 'same_epoch' (before 2026-11-28): admit first, so an update draws its own epoch's successes "
        "again beside their on-policy copies and the buffer is emptied every epoch at γ = 1."))
    trajectories_per_update: int | None = Field(None, ge=1, description=(
        "M: trajectories per update; None = the epoch's episodes (tasks_per_epoch x group_size)."))
    # --- FCF
    fcf: bool = Field(True, description="Failure curriculum filtering (MobileRL §2.2.3).")
    fcf_fail_epochs: int = Field(2, ge=1, description="All-zero epochs in a row before a task cools down.")
    fcf_cooldown_epochs: int = Field(3, ge=1, description="Cooldown epochs (weight exp(-f)) before removal.")
    # --- objective (table 5: KL 0.001, clip 0.2, PPO epochs 1)
    beta: float = Field(0.001, ge=0, description=(
        "KL coefficient against the model training starts from (k3 estimator, TRL)."))
    epsilon: float = Field(0.2, gt=0, description="Clip range of the importance ratio.")
    ppo_epochs: int = Field(1, ge=1, description="Passes over each update's step rows.")

    @model_validator(mode="after")
    def _fits(self) -> AdaGRPOConfig:
        if self.gradient_accumulation_steps != 1:
            raise ValueError("gradient_accumulation_steps: AdaGRPO takes one optimizer step per micro-batch "
                             "of step rows; set per_device_train_batch_size instead")
        return self
