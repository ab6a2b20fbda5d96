"""critic_calibration materialized by Dagster: the programmatic critic is not measured, an LLM
critic that re-judges the stored attempts (a real local OpenAI-compatible server) is."""

from dataclasses import replace

import dagster as dg
import pytest

from assets.critic_calibration import critic_calibration
from ops.data.attempt_store import collect_tables
from ops.agent.episode import CriticFeedback, StepLabel
from ops.curriculum.model import CurriculumTask
from ops.data.schemas import from_rows
from pipelines.resources import resources_for
from resources.experiment import experiment_partitions, register_experiment
from resources.llm import LLMResource
from resources.storage import StorageLocation
from tests.ops.judging.scripted import CLICK_ELEMENT, CLICK_POINT, TERMINATE, CriticScript, decision_json, make_attempt
from tests.support.openai_server import OpenAICompatibleServer

# (task, attempt) -> the simulator judge's verdict; the scripted LLM critic says success to all
TRUTHS = {("wifi", 1): False, ("wifi", 2): True, ("dark", 1): False, ("dark", 2): False}
VARIATION = {"wifi": "parameter_change", "dark": "simplification"}


@dg.multi_asset(outs={"rollout_attempts": dg.AssetOut(), "critic_feedback": dg.AssetOut(),
                      "curriculum_tasks": dg.AssetOut()}, partitions_def=experiment_partitions)
def stored_rollouts(context: dg.AssetExecutionContext, storage: StorageLocation):
    """Attempts staged like `rollouts` stages them, labelled by the programmatic critic (experiment `cal`) or by
    an LLM critic that says success to all (experiment `llm`)."""
    store = storage.attempt_store(context.partition_key)
    llm = context.partition_key == "llm"
    tasks = {}
    for (task_id, attempt), success in TRUTHS.items():
        record = make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE], task_id=task_id, attempt=attempt)
        tasks[task_id] = record.task
        record.ground_truth = replace(record.ground_truth, success=success, progress=float(success))
        record.feedback = CriticFeedback(
            decision=1 if llm else int(success), reason="critic", failure_step=None, task_feasible=True,
            step_analysis=[StepLabel(s.step, True, "closer") for s in record.steps], hint=None,
            critic="llm:scripted" if llm else "programmatic")
        store.save(record)
    attempts, _, feedback = collect_tables(store, "p0", [tasks[t] for t in sorted(tasks)])
    curriculum = from_rows([CurriculumTask(task_id=t, app="settings", instruction=f"Turn on {t}.", step_budget=8,
                                           core_functionality=t, variation_type=VARIATION[t], prerequisites=None,
                                           source_trace_id="s", verifiable=True, goal_screen=t).to_row() for t in sorted(tasks)],
                           "curriculum_tasks")
    return attempts, feedback, curriculum


@pytest.fixture
def llm_server():
    server = OpenAICompatibleServer(CriticScript(decide=[decision_json(1, {1: True, 2: False, 3: True})])).start()
    yield server
    server.stop()


def _calibrate(tmp_path, monkeypatch, llm: LLMResource, rejudge: bool, experiment: str = "cal"):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = {**resources_for("local"), "llm": llm}
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, experiment)
    result = dg.materialize([stored_rollouts, critic_calibration], instance=instance, resources=resources,
                            partition_key=experiment, run_config={"ops": {"critic_calibration": {
                                "config": {"rejudge": rejudge, "max_workers": 2}}}})
    [event] = [e for e in result.get_asset_materialization_events()
               if e.asset_key == dg.AssetKey("critic_calibration")]
    return result.output_for_node("critic_calibration"), event.materialization.metadata


def test_the_programmatic_critic_is_reported_as_ground_truth_not_measured(tmp_path, monkeypatch):
    unreachable = LLMResource(model="openai/none", api_base="http://127.0.0.1:9/v1")  # never asked
    summary, metadata = _calibrate(tmp_path, monkeypatch, unreachable, rejudge=False)
    assert (summary["critic"], summary["measured"], summary["attempts"]) == ("programmatic", False, 4)
    assert metadata["note"].value == "critic = ground truth, not measured"
    assert not {"decision_agreement", "false_success_rate", "false_failure_rate"} & (set(summary) | set(metadata))


def test_an_llm_critic_rejudging_the_attempts_is_measured_against_the_judge(tmp_path, monkeypatch, llm_server):
    llm = LLMResource(model="openai/scripted-model", api_base=llm_server.base_url, timeout_s=10.0, max_retries=0)
    summary, metadata = _calibrate(tmp_path, monkeypatch, llm, rejudge=True)
    assert (summary["critic"], summary["measured"], summary["attempts"], summary["errors"]) == (
        "llm:openai/scripted-model", True, 4, [])
    # it says success to all four: one of four agrees, every judged failure is a false success
    assert (summary["decision_agreement"], summary["false_success_rate"], summary["false_failure_rate"]) == (
        0.25, 1.0, 0.0)
    assert (summary["steps_compared"], summary["step_label_agreement"]) == (12, pytest.approx(8 / 12))
    assert metadata["note"].value == "measured against the simulator's judge"
    assert metadata["false_success_rate"].value == 1.0


def test_an_llm_rollout_critic_is_measured_per_task_type(tmp_path, monkeypatch):
    unreachable = LLMResource(model="openai/none", api_base="http://127.0.0.1:9/v1")  # never asked
    summary, metadata = _calibrate(tmp_path, monkeypatch, unreachable, rejudge=False, experiment="llm")
    assert (summary["critic"], summary["measured"], summary["false_success_rate"]) == ("llm:scripted", True, 1.0)
    table = metadata["by_task_type"].value
    # wifi: one failure called success, one success; dark: two failures called success
    assert "| parameter_change | 2 | 0.5 | 1 | 0 | 1 |" in table and "| simplification | 2 | 0.0 | 2 | 0 | 0 |" in table
    assert "| all | 4 | 0.25 | 3 | 0 | 1 |" in table
