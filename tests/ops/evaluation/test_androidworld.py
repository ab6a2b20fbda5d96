"""The AndroidWorld suite as a benchmark, against a STAND-IN for `android_world`
(tests/ops/evaluation/android_world_standin: the real package needs an emulator). The stand-in implements
exactly the interfaces ops/evaluation/androidworld.py uses, with android_world's signatures."""

import re
import sys
from pathlib import Path
from typing import Sequence

import pytest

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.evaluation.androidworld import AndroidWorldConfig, available, evaluate_on_androidworld
from ops.data.attempt_store import ParquetAttemptStore
from ops.evaluation.benchmark import pass_at_k
from ops.agent.episode import PolicyOutput, PolicyRequest
from ops.agent.policy import PromptedPolicy
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import element_label

STANDIN = Path(__file__).parent / "android_world_standin"


@pytest.fixture
def android_world(monkeypatch):
    monkeypatch.syspath_prepend(str(STANDIN))
    yield
    for name in [m for m in sys.modules if m == "android_world" or m.startswith("android_world.")]:
        del sys.modules[name]


class GoalPolicy(PromptedPolicy):
    """Does what the stand-in's goals ask (or opens `wrong_app`), then declares completion."""

    def __init__(self, wrong_app: str | None = None):
        super().__init__("elements", f"goal:{wrong_app}")
        self.wrong_app = wrong_app

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        out = []
        for r in requests:
            if r.history:
                action = Action(type=ActionType.TERMINATE, status="success")
            elif match := re.match(r"Open the (\w+) app", r.instruction):
                action = Action(type=ActionType.OPEN_APP, app=self.wrong_app or match.group(1))
            else:
                a, b = map(int, re.findall(r"\d+", r.instruction))
                action = Action(type=ActionType.ANSWER, text=str(a + b))
            labels = [element_label(e) for e in r.observation.elements]
            out.append(PolicyOutput(label_echo.render_target(action, labels), messages_to_json(self.prompt_for(r)), 0.0))
        return out


def test_without_android_world_the_suite_is_unavailable():
    assert not available()


def test_pass_at_k_over_the_suite_instances(android_world, tmp_path):
    from android_world.env import env_launcher

    assert available()
    config = AndroidWorldConfig(n_task_combinations=3, console_port=5556, grpc_port=8556)
    evaluation = evaluate_on_androidworld("base", GoalPolicy(), config, ParquetAttemptStore.from_uri(str(tmp_path)), k=2)
    results = evaluation.results
    assert env_launcher.launched == [dict(console_port=5556, emulator_setup=False,
                                          adb_path=env_launcher.DEFAULT_ADB_PATH, grpc_port=8556)]
    assert results.height == 2 * 3 * 2  # tasks x n_task_combinations x k
    assert sorted(set(results["task_id"])) == [f"{name}#{i}" for name in ("AnswerTask", "OpenAppTask") for i in range(3)]
    assert results["success"].all() and set(results["difficulty"]) == {"L1", "L3"}
    table = pass_at_k(results, 2).filter(difficulty="all")
    assert table["pass@1"].to_list() == [1.0] and table["pass@2"].to_list() == [1.0]


def test_a_wrong_app_fails_and_actions_reach_android_world_as_json_actions(android_world, tmp_path):
    from android_world.env import env_launcher, interface

    env = interface.AsyncEnv()
    evaluation = evaluate_on_androidworld("base", GoalPolicy(wrong_app="files"), AndroidWorldConfig(tasks=("OpenAppTask",)),
                                          ParquetAttemptStore.from_uri(str(tmp_path)), k=1, env=env)
    assert not env_launcher.launched  # the given environment is used
    assert evaluation.results["success"].to_list() == [False]
    assert env.executed[0]["action_type"] == "open_app" and env.executed[0]["app_name"] == "files"
    assert not evaluation.results["first_app_right"].any()


def test_the_benchmark_asset_selects_the_suite_and_names_what_is_missing(android_world):
    from assets.benchmark import BenchmarkConfig, _androidworld
    from android_world.env import env_launcher

    config = BenchmarkConfig(suite="androidworld", seeds_per_template=2, androidworld_tasks=["AnswerTask"],
                             emulator_console_port=5558)
    aw_config, env = _androidworld(config)
    assert (aw_config.n_task_combinations, aw_config.tasks, aw_config.console_port) == (2, ("AnswerTask",), 5558)
    assert env_launcher.launched[-1]["console_port"] == 5558 and env is not None


def test_the_androidworld_suite_without_the_package_is_a_clear_config_error():
    from assets.benchmark import BenchmarkConfig, _androidworld

    with pytest.raises(ValueError, match="benchmark_results.suite: 'androidworld' needs the android_world package"):
        _androidworld(BenchmarkConfig(suite="androidworld"))
