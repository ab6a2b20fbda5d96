"""What a training method declares, what it is given when it trains, and what it gives back.

One `Method` per method, listed in `training.methods.registry`; the graph derives every training
asset, the benchmark's inputs, the printed rows and the training stage's priorities from that list.
A method's `train` is plain Python: it reads its inputs, asks the pipeline for what only the pipeline
has (`TrainingServices`: weights on disk, acting policies, environments, attempt storage) and returns
a `MethodResult`; it imports torch only when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from ops.agent.episode import Critic, Environment, Policy
from ops.curriculum.variants import TaskVariants
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from ops.judging.judges import Judge
from ops.data.attempt_store import ParquetAttemptStore
from training.methods.checkpoint import Checkpoint
from training.trainers.settings import Preset, TrainSettings

if TYPE_CHECKING:  # torch and TRL load with the trainers, only when a method trains
    from datasets import Dataset

    from training.trainers.runs import TrainProgress, TrainReport

NO_WEIGHTS = "the start checkpoint has no weights to train from: set policy.checkpoint to the weights the endpoint serves"


class NoOptions(BaseModel):
    """A method without asset-level options of its own."""


class TrainingServices(Protocol):
    """What a method may ask of the pipeline while it trains (the Dagster assets provide it)."""

    experiment: str
    run_id: str
    world_seed: int
    screen_size: tuple[int, int]
    prompt_style: str

    def weights_dir(self, checkpoint: Checkpoint) -> Path:
        """A local directory holding `checkpoint`'s weights."""

    def store_weights(self, directory: Path, name: str) -> str:
        """Store a weights directory under this run's `name`; its URI."""

    def acting_policy(self, checkpoint: Checkpoint, *, temperature: float | None, seed: int | None,
                      version: str) -> AbstractContextManager[Policy]:
        """`checkpoint` as a policy that acts, named `version` in the attempts it makes."""

    def environment_factory(self) -> Callable[[], Environment]:
        """A factory of fresh environments (simulator instances or leased devices)."""

    def group_environment_factory(self) -> Callable[[], Environment]:
        """A new factory of environments for one batch of online-RL episode groups (a group's episodes
        start alike: a forked snapshot on the simulator, the cleared app on a device)."""

    def rollout_critic(self, hints: CorrectiveHintSettings) -> Critic:
        """The hierarchical critic of hint-guided attempts (programmatic on the simulator, the LLM critic
        on devices)."""

    def judge(self) -> Judge:
        """The verdict on an episode: the environment's judge, else the critic's (`ops.judging.judges`)."""

    def task_variants(self, seed_offset: int) -> TaskVariants:
        """Fresh task variants: re-seeded templates on the simulator (at seed + round * `seed_offset`),
        LLM-written instructions on devices."""

    def attempt_store(self, stage: str) -> ParquetAttemptStore:
        """The experiment's staged attempts of `stage` (resumable)."""

    def read_state(self, name: str) -> str | None:
        """The experiment's small state file `name` (e.g. AdaGRPO's failure history), None if absent."""

    def write_state(self, name: str, text: str) -> None: ...

    workdir: Path  # a scratch directory for this training, kept until its checkpoint is stored

    def log(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...

    def progress(self, progress: TrainProgress) -> None:
        """Where the trainer reports step/total, loss and reward while it trains."""

    def train_sft(self, base: Path, dataset: Dataset, out: Path, settings: TrainSettings, *,
                  method: str) -> TrainReport:
        """SFT where the step is placed: in this process, or under `accelerate launch` on its GPUs."""

    def train_hifpo(self, base: Path, dataset: Dataset, out: Path, settings: TrainSettings, *,
                    remedial: Dataset | None = None) -> TrainReport:
        """HiFPO's GRPO where the step is placed, as `train_sft`."""


@dataclass(frozen=True)
class MethodRun:
    """One training of a method: its upstream values by asset name (tables and checkpoints), its
    preset and setting overrides, its own options, and the pipeline's services."""

    inputs: Mapping[str, Any]
    preset: Preset
    overrides: Mapping[str, Any]
    options: BaseModel
    services: TrainingServices
    settings_class: type[TrainSettings]

    def settings(self, **defaults: Any) -> Any:
        """The trainer settings: the preset, then `defaults` this run needs (e.g. the policy's output
        format), then the user's overrides, which win."""
        return self.settings_class.preset(self.preset, {**defaults, **self.overrides})


@dataclass
class MethodResult:
    """What a method gives back: the checkpoint it started from and, when it trained, the report of the
    run whose weights are the new checkpoint; else why not. `details` are JSON-able figures for the
    asset's metadata; `curves` of an untrained result still get their chart."""

    start: Checkpoint
    report: TrainReport | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    @staticmethod
    def unchanged(start: Checkpoint, reason: str, **details: Any) -> MethodResult:
        return MethodResult(start=start, reason=reason, details=details)


@dataclass(frozen=True)
class Method:
    """One training method, declared once."""

    name: str  # the checkpoint's `method` and the asset `<name>_checkpoint`
    title: str  # how tables print it
    source: str  # the paper and section it implements
    summary: str  # the asset's description
    settings: type[TrainSettings]  # the trainer's typed settings (presets 'cpu_tiny' and 'paper', overrides)
    train: Callable[[MethodRun], MethodResult]
    reads: tuple[str, ...]  # upstream assets, handed to `train` by name
    preload: tuple[str, ...]  # modules its step process imports, so the training server imports them once
    priority: int  # Dagster priority in the training stage, longest chain highest; data only it reads inherits it
    options: type[BaseModel] = NoOptions  # its own asset-config fields, beside preset / overrides / enabled
    benchmarked: bool = True
    enabled: bool = True  # trained by default; False: an ablation a user switches on
    code_version: str = "1"

    @property
    def asset(self) -> str:
        return f"{self.name}_checkpoint"


def base_start(run: MethodRun) -> Checkpoint:
    """The checkpoint most methods train from: the base policy."""
    return run.inputs["base_policy"]
