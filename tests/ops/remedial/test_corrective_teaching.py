"""Corrective teaching (MobileWizard §3.4.4) on scripted failed attempts in the simulator: the
graft keeps the agent's steps before the critic's failing step, a teacher finishes, the replay
from the task's start is judged; what does not pass is counted by reason."""

import dataclasses
import json

import pytest

from ops.actions import Action, ActionType, ReasoningParts, parse_structured, render_structured
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.remedial.corrective_teaching import (ScriptedPolicy, TeachingReport, failed_attempts, graft, remedial_feedback,
                                     remedial_tables, teach)
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.judging.critic.reasoning_annotation import AnnotationFailure, ProgrammaticAnnotator
from ops.agent.episode import PolicyOutput, TaskSpec
from ops.agent.messages import messages_to_json
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import validate
from ops.environments.simulator import SimEnvironment, template_task_spec
from ops.remedial.solver_teacher import SolverTeacher
from ops.remedial.teachers import PolicyTeacher, TeacherFailure, TeachingRequest
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
    return collect_tables(store, "agent", [task])


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


def _structured_tables(tmp_path):
    """The rollout tables of a structured agent's attempt that takes two right steps and then a wrong one."""
    plan = _plan(WIFI)
    store = ParquetAttemptStore.from_uri(str(tmp_path / "attempts"))
    run_rollouts([WIFI], small_env, StructuredAgent("mobilewizard", [plan[0], plan[1], BACK, DONE], version="agent"),
                 ProgrammaticCritic(), store, RolloutConfig(attempts=1))
    return collect_tables(store, "agent", [WIFI])


def _structured_failure(tmp_path):
    (failed,) = failed_attempts(*_structured_tables(tmp_path), {WIFI.task_id: WIFI}, TeachingReport())
    return failed


def test_a_structured_attempt_replays_with_its_memory_and_an_unsayable_teacher_is_counted(tmp_path):
    tables = _structured_tables(tmp_path)
    assert tables[1]["prompt"][2].count("[success]") == 2  # the memory in the stored prompt of step 3
    (failed,) = failed_attempts(*tables, {WIFI.task_id: WIFI}, TeachingReport())
    assert failed.failure_step == 2 and failed.steps[1].reasoning is not None
    # the kept steps replay to the very prompts stored (memory and all); the plain voice cannot say the
    # teacher's actions in the structured format, which is counted
    outcome = _graft(failed, style="mobilewizard")
    assert outcome.failure == "unsayable", outcome.detail


def _text(prompt: str) -> str:
    """The text of a stored prompt's messages."""
    return "\n".join(m["content"] if isinstance(m["content"], str) else
                     "\n".join(part.get("text", "") for part in m["content"]) for m in json.loads(prompt))


def test_a_structured_attempt_grafted_by_the_solver_says_its_steps_with_annotated_parts_and_is_verified(tmp_path):
    failed = _structured_failure(tmp_path)
    outcome = graft(failed, SolverTeacher(), small_env, ScriptedPolicy("mobilewizard"), ProgrammaticCritic(),
                    ProgrammaticAnnotator())
    assert outcome.verified, outcome.detail
    assert (outcome.kept_steps, outcome.teacher_steps) == (2, 4)
    kept, taught = outcome.record.steps[:2], outcome.record.steps[2:]
    assert [s.raw_output for s in kept] == [s.raw_output for s in failed.steps[:2]]
    for step in taught:  # the four parts parse back with the strict parser and are the step's stored reasoning
        parsed = parse_structured(step.raw_output)
        assert parsed.ok and parsed.reasoning == step.reasoning and all(t.strip() for t in parsed.reasoning.texts())
        assert parsed.action.to_dict() == step.action
    # the first teacher step verifies the agent's last kept step; its action guidance says the point it taps
    assert taught[0].reasoning.self_verification.startswith("The previous action, click")
    assert f"({taught[0].action['args']['point'][0]}, " in taught[0].reasoning.action_guidance
    assert taught[-1].reasoning.planning.startswith("The task is done")
    # the memory carries the teacher's parts: a later prompt holds an earlier teacher step's plan and outcome
    assert "Planning history" in _text(taught[1].prompt) and taught[0].reasoning.planning[:40] in _text(taught[1].prompt)
    assert taught[2].prompt.count("[success]") == 4  # two kept steps and two teacher steps so far
    attempts, steps = remedial_tables([outcome.record])
    assert validate(steps, "steps") == [] and steps["planning"].null_count() == 0
    assert remedial_feedback([outcome.record])["decision"].to_list() == [1]


def test_a_teacher_step_the_writer_cannot_annotate_is_counted(tmp_path):
    failed = _structured_failure(tmp_path)

    class Mute:
        name = "mute"

        def annotate(self, items):
            return [AnnotationFailure("low_confidence", "no idea") for _ in items]

    outcome = graft(failed, SolverTeacher(), small_env, ScriptedPolicy("mobilewizard"), ProgrammaticCritic(), Mute())
    assert outcome.failure == "unannotated" and "low_confidence" in outcome.detail


def test_a_structured_teacher_policy_acts_with_the_agents_memory(tmp_path):
    failed = _structured_failure(tmp_path)
    plan = _plan(WIFI)
    memories = []

    class Expert(StructuredAgent):
        def say(self, action, request, reasoning=None):
            memories.append(request.memory.render() if request.memory is not None else None)
            assert request.history == []
            return super().say(action, request)

    teacher = PolicyTeacher(Expert("mobilewizard", [*plan[2:], DONE], version="expert"), small_env)
    outcome = graft(failed, teacher, small_env, ScriptedPolicy("mobilewizard"), ProgrammaticCritic(),
                    ProgrammaticAnnotator())
    assert outcome.verified, outcome.detail
    # the teacher starts from the agent's memory of its two kept steps and adds its own steps to it
    assert [m.count("[success]") for m in memories] == [2, 3, 4, 5]
