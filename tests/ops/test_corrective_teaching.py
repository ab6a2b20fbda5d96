"""Corrective teaching (MobileWizard §3.4.4) on scripted failed attempts in the simulator: the
graft keeps the agent's steps before the critic's failing step, a teacher finishes, the replay
from the task's start is judged; what does not pass is counted by reason."""

import dataclasses
import json

import pytest

from ops.actions import Action, ActionType, ReasoningParts, render_structured
from ops.attempt_store import ParquetAttemptStore, collect_tables
from ops.corrective_teaching import (ScriptedPolicy, TeachingReport, failed_attempts, graft, remedial_tables,
                                     teach)
from ops.critic.programmatic import ProgrammaticCritic
from ops.episode import PolicyOutput, TaskSpec
from ops.prompts import messages_to_json
from ops.rollout import RolloutConfig, run_rollouts
from ops.schemas import validate
from ops.sim_env import SimEnvironment, template_task_spec
from ops.teachers import PolicyTeacher, SolverTeacher, TeacherFailure, TeachingRequest
from phonesim.solver import solve
from phonesim.tasks import instantiate

BACK = Action(ActionType.SYSTEM_BUTTON, button="back")
HOME = Action(ActionType.SYSTEM_BUTTON, button="home")
DONE = Action(ActionType.TERMINATE, status="success")
WIFI = template_task_spec(instantiate("settings.connect_wifi", 0))  # 5 actions: settings, network, wifi, row, connect
NAVIGATION = TaskSpec("nav:wifi", "Open the Wi-Fi settings.", 6, app="settings", params={"goal_screen": "wifi"})


def small_env() -> SimEnvironment:
    return SimEnvironment(size=(270, 600))


def _plan(task: TaskSpec) -> list[Action]:
    return solve(instantiate(task.template_id, task.seed).make_phone((270, 600)), instantiate(task.template_id, task.seed))


def _rollout(tmp_path, task: TaskSpec, script: list[Action], attempts: int = 1):
    """Run `script` as the agent (elements style) on `task`; the stored tables, judged by the programmatic critic."""
    store = ParquetAttemptStore.from_uri(str(tmp_path / "attempts"))
    agent = ScriptedPolicy("elements", script, version="agent")
    run_rollouts([task], small_env, agent, ProgrammaticCritic(), store, RolloutConfig(attempts=attempts))
    return collect_tables(store, "agent", [task.task_id])


def _failed(tmp_path, task: TaskSpec, script: list[Action], attempts: int = 1):
    report = TeachingReport()
    return failed_attempts(*_rollout(tmp_path, task, script, attempts), {task.task_id: task}, report), report


def _graft(failed, teacher=None, style="elements"):
    return graft(failed, teacher or SolverTeacher(), small_env, ScriptedPolicy(style), ProgrammaticCritic())


def test_a_graft_keeps_the_steps_before_the_failing_one_and_replays_to_a_judged_success(tmp_path):
    plan = _plan(WIFI)
    (failed,), report = _failed(tmp_path, WIFI, [plan[0], plan[1], BACK, DONE])
    assert (report.failures_seen, failed.failure_step) == (1, 2)  # the back press is the first wrong step
    outcome = _graft(failed)
    assert outcome.verified and (outcome.kept_steps, outcome.teacher_steps) == (2, 4)  # 3 actions left + finish
    record = outcome.record
    assert record.ground_truth.success and not record.ground_truth.overdue and record.feedback.decision == 1
    assert [s.raw_output for s in record.steps[:2]] == [s.raw_output for s in failed.steps[:2]]
    assert [s.prompt for s in record.steps[:2]] == [s.prompt for s in failed.steps[:2]]
    assert record.steps[-1].action == DONE.to_dict() and record.end_reason == "terminated"
    # the teacher's steps read like the agent's: element-list prompts, label-echo answers naming a row
    assert all(s.raw_output.startswith("- ") for s in record.steps[2:5])
    assert all("Done:" in json.loads(s.prompt)[0]["content"][-1]["text"] for s in record.steps[2:])
    attempts, steps = remedial_tables([record])
    assert validate(attempts, "attempts") == [] and validate(steps, "steps") == []
    assert attempts["critic_decision"].to_list() == [1] and steps.height == 6


def test_hinted_attempts_are_grafted_with_their_hints_in_every_prompt(tmp_path):
    plan = _plan(WIFI)
    failed, _ = _failed(tmp_path, WIFI, [plan[0], BACK, DONE, plan[0], plan[1], HOME, DONE], attempts=2)
    second = next(f for f in failed if f.attempt == 2)
    assert [h.attempt for h in second.hints] == [1]
    outcome = _graft(second)  # the kept steps' prompts are rebuilt with the hints read back from the feedback
    assert outcome.verified and outcome.kept_steps == 2
    assert all("Hints:" in s.prompt for s in outcome.record.steps)


def test_a_navigation_task_is_finished_by_descending_the_goal_distance(tmp_path):
    (failed,), _ = _failed(tmp_path, NAVIGATION, [HOME, DONE])
    outcome = _graft(failed)
    assert outcome.verified and outcome.kept_steps == 0
    assert outcome.record.steps[-1].action == DONE.to_dict() and outcome.record.ground_truth.success


def test_a_teacher_that_cannot_finish_in_the_steps_left_is_counted(tmp_path):
    plan = _plan(WIFI)
    (failed,), report = _failed(tmp_path, WIFI, [plan[0], BACK, BACK, BACK, DONE])
    late = dataclasses.replace(failed, failure_step=4)  # as a critic naming the last step would
    late = dataclasses.replace(late, task=dataclasses.replace(WIFI, step_budget=6))  # 2 steps left, 4 needed
    grafts = teach([late], SolverTeacher(), small_env, ScriptedPolicy("elements"), ProgrammaticCritic(), report)
    assert grafts == [] and report.failures == {"over_budget": 1}
    assert (report.repaired, report.verified) == (0, 0) and report.unrepaired[0].detail.startswith("the shortest")


def test_the_verifier_rejects_a_graft_that_does_not_pass(tmp_path):
    plan = _plan(WIFI)
    (failed,), report = _failed(tmp_path, WIFI, [plan[0], BACK, DONE])
    weak = PolicyTeacher(ScriptedPolicy("qwen3vl", [BACK, DONE], version="weak"), small_env)
    [outcome] = [*teach([failed], weak, small_env, ScriptedPolicy("elements"), ProgrammaticCritic(), report),
                 *report.unrepaired]
    assert outcome.failure == "not_verified" and outcome.record.feedback.decision == 0
    assert not outcome.record.ground_truth.success and outcome.teacher_steps == 2
    assert (report.failures_seen, report.repaired, report.verified, report.yield_rate) == (1, 1, 0, 0.0)


def test_a_policy_teacher_that_gives_up_or_talks_nonsense_is_counted(tmp_path):
    (failed,), _ = _failed(tmp_path, WIFI, [BACK, DONE])

    class Babbler(ScriptedPolicy):
        def act_batch(self, requests):
            return [dataclasses.replace(out, raw_text="no idea") for out in super().act_batch(requests)]

    give_up = PolicyTeacher(ScriptedPolicy("qwen3vl", [Action(ActionType.TERMINATE, status="failure")]), small_env)
    assert _graft(failed, give_up).failure == "gave_up"
    assert _graft(failed, PolicyTeacher(Babbler("qwen3vl", [BACK]), small_env)).failure == "invalid_output"


def test_a_policy_teacher_with_the_solvers_actions_repairs_like_the_solver(tmp_path):
    plan = _plan(WIFI)
    (failed,), _ = _failed(tmp_path, WIFI, [plan[0], plan[1], BACK, DONE])
    scripted = PolicyTeacher(ScriptedPolicy("qwen3vl", [*plan[2:], DONE], version="expert"), small_env)
    outcome = _graft(failed, scripted)
    assert outcome.verified and outcome.teacher_steps == 4
    assert outcome.record.policy_version == "agent+policy:expert"


def test_a_replay_that_leaves_the_stored_path_is_counted_not_grafted(tmp_path):
    plan = _plan(WIFI)
    (failed,), _ = _failed(tmp_path, WIFI, [plan[0], plan[1], BACK, DONE])
    moved = dataclasses.replace(failed.steps[1], state=failed.steps[0].state)
    assert _graft(dataclasses.replace(failed, steps=[failed.steps[0], moved, *failed.steps[2:]])).failure \
        == "replay_diverged"
    assert _graft(failed, style="qwen3vl").failure == "prompt_mismatch"  # not the style the agent read


def test_attempts_that_cannot_be_grafted_are_counted_when_read(tmp_path):
    plan = _plan(WIFI)
    attempts, steps, feedback = _rollout(tmp_path, WIFI, [plan[0], BACK, DONE, BACK, DONE], attempts=2)
    report = TeachingReport()
    assert failed_attempts(attempts, steps, feedback, {}, report) == []
    assert report.failures == {"task_unknown": 2} and report.failures_seen == 2
    report = TeachingReport()
    no_hint = feedback.with_columns(hint_summary=None)
    [first] = failed_attempts(attempts, steps, no_hint, {WIFI.task_id: WIFI}, report)
    assert first.attempt == 1 and report.failures == {"hints_missing": 1}


def test_the_solver_teacher_finishes_with_terminate_only_where_the_budget_has_room():
    env = small_env()
    env.reset(WIFI)
    request = TeachingRequest(WIFI, env.snapshot(), 5, [])
    assert SolverTeacher().complete(request) == _plan(WIFI)
    assert SolverTeacher().complete(dataclasses.replace(request, steps_left=6))[-1] == DONE
    with pytest.raises(TeacherFailure, match="over_budget"):
        SolverTeacher().complete(dataclasses.replace(request, steps_left=4))


class StructuredAgent(ScriptedPolicy):
    """Says its scripted actions in the structured-reasoning style (four parts, clicks at element centres)."""

    def say(self, action, request):
        if action.element is not None:
            x0, y0, x1, y1 = request.observation.elements[action.element]["grid"]
            action = dataclasses.replace(action, element=None, point=((x0 + x1) // 2, (y0 + y1) // 2))
        parts = ReasoningParts("As planned.", f"On {request.observation.screen}.", "Go on.", f"Do {action.type.value}.")
        return PolicyOutput(render_structured(action, parts), messages_to_json(self.prompt_for(request)), 0.0)


def test_a_structured_attempt_replays_with_its_memory_and_an_unsayable_teacher_is_counted(tmp_path):
    plan = _plan(WIFI)
    store = ParquetAttemptStore.from_uri(str(tmp_path / "attempts"))
    run_rollouts([WIFI], small_env, StructuredAgent("mobilewizard", [plan[0], plan[1], BACK, DONE], version="agent"),
                 ProgrammaticCritic(), store, RolloutConfig(attempts=1))
    tables = collect_tables(store, "agent", [WIFI.task_id])
    assert tables[1]["prompt"][2].count("[success]") == 2  # the memory in the stored prompt of step 3
    (failed,) = failed_attempts(*tables, {WIFI.task_id: WIFI}, TeachingReport())
    assert failed.failure_step == 2 and failed.steps[1].reasoning is not None
    # the kept steps replay to the very prompts stored (memory and all); the plain voice cannot say the
    # teacher's actions in the structured format, which is counted
    outcome = _graft(failed, style="mobilewizard")
    assert outcome.failure == "unsayable", outcome.detail
