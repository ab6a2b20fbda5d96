"""`TrainingServices` for a method training inside a Dagster asset: the run's resources, as the
plain-Python interface the methods of training.methods ask for."""

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Callable

import dagster as dg
import pyarrow.fs as pafs

from ops.agent.episode import Critic, Environment, Policy
from ops.curriculum.variants import TaskVariants
from ops.data.attempt_store import ParquetAttemptStore
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from ops.judging.judges import Judge
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.judging import episode_judge, rollout_critic, task_variants
from resources.llm import LLMResource
from resources.experiment import experiment_of
from resources.experiment_names import check_segment
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation
from resources.deployment import MethodPlacement
from training.methods.checkpoint import Checkpoint
from training.methods.launched import Launch, train_launched

STATE_DIR = "_state"  # an experiment's small state files (e.g. AdaGRPO's failure history), beside its tables


class AssetTrainingServices:
    """What a method asks of the pipeline, served from one asset step's context and resources."""

    def __init__(self, context: dg.AssetExecutionContext, workdir: Path, method: str,
                 placement: MethodPlacement | None = None):
        resources = context.resources
        self.context, self.workdir, self.method = context, workdir, method
        self.experiment, self.run_id = experiment_of(context), context.run_id
        self.policy: PolicyResource = resources.policy
        self.environment: SimulatorResource | AdbDeviceResource = resources.simulator
        self.llm: LLMResource = resources.llm
        self.storage: StorageLocation = resources.storage
        self.artifact_store: ArtifactStore = resources.artifact_store
        self.world_seed = self.environment.world_seed
        self.screen_size = (self.environment.screen_width, self.environment.screen_height)
        self.prompt_style = self.policy.prompt_style
        placement = placement or MethodPlacement()
        self.launch = Launch(placement.process_count, placement.accelerate_file()) if placement.launched else None

    def weights_dir(self, checkpoint: Checkpoint) -> Path:
        return self.artifact_store.local_path(checkpoint.uri)

    def store_weights(self, directory: Path, name: str) -> str:
        return self.artifact_store.put_dir(directory, f"{self.experiment}/{name}/{self.run_id}")

    def acting_policy(self, checkpoint: Checkpoint, *, temperature: float | None, seed: int | None,
                      version: str) -> AbstractContextManager[Policy]:
        return self.policy.acting_policy(checkpoint, self.artifact_store, temperature=temperature, seed=seed,
                                         version=version)

    def environment_factory(self) -> Callable[[], Environment]:
        return self.environment.make_env

    def group_environment_factory(self) -> Callable[[], Environment]:
        return self.environment.group_env_factory()

    def rollout_critic(self, hints: CorrectiveHintSettings) -> Critic:
        return rollout_critic("auto", self.environment, self.llm, hints)

    def judge(self) -> Judge:
        return episode_judge(self.environment, self.llm)

    def task_variants(self, seed_offset: int) -> TaskVariants:
        return task_variants(self.environment, self.llm, seed_offset)

    def attempt_store(self, stage: str) -> ParquetAttemptStore:
        return self.storage.attempt_store(self.experiment, stage)

    def _state_path(self, name: str) -> tuple[pafs.FileSystem, str]:
        fs, root = self.storage.filesystem()
        return fs, f"{root}/{check_segment(self.experiment, 'experiment')}/{STATE_DIR}/{check_segment(name, 'state file')}"

    def read_state(self, name: str) -> str | None:
        fs, path = self._state_path(name)
        if fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        with fs.open_input_stream(path) as f:
            return f.read().decode()

    def write_state(self, name: str, text: str) -> None:
        fs, path = self._state_path(name)
        fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with fs.open_output_stream(path) as f:
            f.write(text.encode())

    def log(self, message: str) -> None:
        self.context.log.info(message)

    def warn(self, message: str) -> None:
        self.context.log.warning(message)

    def progress(self, progress) -> None:
        self.context.log.info(f"{self.method} training: {progress}")

    def train_sft(self, base, dataset, out, settings, *, method):
        if self.launch is not None:
            return train_launched(self.launch, "sft", method, base, dataset, out, settings, self.log)
        from training.trainers.sft import train_sft

        return train_sft(base, dataset, out, settings, method=method, progress=self.progress)

    def train_hifpo(self, base, dataset, out, settings, *, remedial=None):
        if self.launch is not None:
            if remedial is not None:
                raise ValueError("hifpo_checkpoint.remedial: the remedial epoch trains in one process; a launched "
                                 "trainer (the deployment's gpus / processes for hifpo) does not run it yet")
            return train_launched(self.launch, "hifpo", "hifpo", base, dataset, out, settings, self.log)
        from training.methods.hifpo.trainer import train_hifpo

        return train_hifpo(base, dataset, out, settings, progress=self.progress, remedial=remedial)
