"""AdaGRPO's CPU budget: training ends after the epoch that spent it, and says so."""

import contextlib

from training.methods.adagrpo.rules import FailureCurriculum
from tests.support.scripted_policy import RandomClickPolicy
from training.models.tiny import build_tiny_model
from training.methods.adagrpo.trainer import run_adagrpo
from training.methods.adagrpo.config import AdaGRPOConfig
from tests.support.online_rl import simulator_setting


def _run(tmp_path, **overrides):
    config = AdaGRPOConfig.cpu_tiny(tasks_per_epoch=1, group_size=2, adapr=False, fcf=False, **overrides)

    @contextlib.contextmanager
    def act(checkpoint_dir, epoch):
        yield RandomClickPolicy(seed=epoch)

    return run_adagrpo(base_dir=build_tiny_model(tmp_path / "tiny"), workdir=tmp_path, config=config, act=act,
                       failures=FailureCurriculum(), log=lambda line: None,
                       **simulator_setting(["settings.connect_wifi"]))


def test_a_spent_budget_ends_training_after_that_epoch(tmp_path):
    result = _run(tmp_path / "budget", epochs=3, cpu_seconds_budget=1e-3)
    assert [epoch for epoch, _ in result.curves["reward"]] == [1]
    assert result.stopped is not None and result.stopped.startswith("CPU budget:") and "after epoch 1" in result.stopped


def test_without_a_budget_every_epoch_runs(tmp_path):
    result = _run(tmp_path / "all", epochs=2)
    assert [epoch for epoch, _ in result.curves["reward"]] == [1, 2] and result.stopped is None
