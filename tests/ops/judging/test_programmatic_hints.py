"""The programmatic critic's hints name the element to use, for template tasks (from the
solver) and for goal-screen curriculum tasks (the tap that brings the goal screen closest), and
with `hint_steps` > 1 the next steps of that plan too."""

from __future__ import annotations

import json

from ops.actions import Action, ActionType
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import AttemptRecord, GroundTruth, StepRecord, TaskSpec
import pytest

from ops.agent.hint_marks import element_name, hint_targets
from phonesim.tasks import instantiate
from phonesim.phone import Phone
from phonesim.solver import solve


def _attempt(spec: TaskSpec, phone: Phone, taps: list[str]) -> AttemptRecord:
    """An attempt that taps the elements with these texts in turn, recorded like rollouts do."""
    steps = []
    for t, text in enumerate(taps):
        obs = phone.observe()
        index = next(e["index"] for e in obs.elements if element_name(e) == text)
        state = json.dumps(phone.snapshot())
        action = Action(ActionType.CLICK, element=index)
        result = phone.step(action)
        steps.append(StepRecord(step=t, screenshot_png=b"", elements=obs.elements, a11y=None, app=obs.app,
                                screen=obs.screen, prompt="", raw_output="", action=action.to_dict(), parse_error=None,
                                conclusion="", latency_s=0.0, env_ok=result.ok, env_reason=result.reason, state=state))
    return AttemptRecord(task=spec, attempt=1, policy_version="p", hints=[], steps=steps, end_reason="budget",
                         answer=None, final_state=json.dumps(phone.snapshot()),
                         ground_truth=GroundTruth(success=False, progress=0.0, false_complete=False, side_effects=0,
                                                  overdue=False))


def _goal_task(goal: str) -> TaskSpec:
    return TaskSpec(task_id=f"nav-{goal}", instruction=f"In Settings, open {goal}.", step_budget=6, app="settings",
                    params={"goal_screen": goal})


def test_goal_screen_task_hint_names_the_app_to_open_at_the_launcher():
    feedback = ProgrammaticCritic().evaluate(_attempt(_goal_task("wifi"), Phone(0), ["Clock"]))
    assert feedback.failure_step == 0
    assert feedback.hint.hint_summary == "On 'launcher', click 'Settings'."
    assert hint_targets(feedback.hint.hint_summary) == [("launcher", "Settings")]


def test_goal_screen_task_hint_inside_the_app_names_the_next_row():
    phone = Phone(0)
    feedback = ProgrammaticCritic().evaluate(_attempt(_goal_task("wifi"), phone, ["Settings", "Display"]))
    assert [s.reasonable for s in feedback.step_analysis] == [True, False]
    [(screen, name)] = hint_targets(feedback.hint.hint_summary)
    assert screen == "main"
    # tapping the named row really brings Wi-Fi closer from the main screen
    restored = Phone(0)
    restored.restore(json.loads(_attempt(_goal_task("wifi"), Phone(0), ["Settings"]).final_state))
    obs = restored.observe()
    restored.step(Action(ActionType.CLICK, element=next(e["index"] for e in obs.elements if element_name(e) == name)))
    assert restored.observe().screen in ("network", "wifi")


def _tap_named(phone: Phone, name: str) -> None:
    obs = phone.observe()
    phone.step(Action(ActionType.CLICK, element=next(e["index"] for e in obs.elements if element_name(e) == name)))


def test_goal_screen_plan_hint_walks_to_the_goal_screen():
    feedback = ProgrammaticCritic(hint_steps=4).evaluate(_attempt(_goal_task("wifi"), Phone(0), ["Clock"]))
    plan = hint_targets(feedback.hint.hint_summary)
    assert plan[0] == ("launcher", "Settings") and len(plan) >= 2
    assert len(feedback.hint.suggested_approach) == len(plan)
    assert feedback.hint.suggested_approach[:2] == ["on the launcher 'launcher' screen, click 'Settings'",
                                                    f"on the settings 'main' screen, click '{plan[1][1]}'"]
    phone = Phone(0)
    for screen, name in plan:  # each step is on the screen the previous one led to
        assert phone.observe().screen == screen
        _tap_named(phone, name)
    assert phone.observe().screen == "wifi"


@pytest.mark.parametrize("template", ["settings.toggle_location", "clock.delete_alarm", "notes.delete"])
def test_template_plan_hint_follows_the_solver_on_distinct_screens(template):
    inst = instantiate(template, 0, 0)
    spec = TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=inst.step_budget, app=inst.apps[0],
                    template_id=template, seed=0)
    one = ProgrammaticCritic(hint_steps=1).evaluate(_attempt(spec, inst.make_phone(), ["Recipes"])).hint
    plan = ProgrammaticCritic(hint_steps=3).evaluate(_attempt(spec, inst.make_phone(), ["Recipes"])).hint
    first = plan.hint_summary.split(". On '")[0] + "."
    assert first == one.hint_summary  # one step: exactly the single-step hint
    screens = [line.split("'")[1] for line in plan.suggested_approach]
    assert 2 <= len(screens) <= 3 and len(set(screens)) == len(screens)
    solution = solve(inst.make_phone(), inst)
    replay = inst.make_phone()
    for action, screen in zip(solution, screens):  # the plan is the solver's, screen by screen
        assert replay.observe().screen == screen
        replay.step(action)


def test_hint_steps_below_one_is_refused():
    with pytest.raises(ValueError, match="hint_steps must be at least 1"):
        ProgrammaticCritic(hint_steps=0)


def test_direct_plans_hint_taps_where_the_shortest_plan_long_presses():
    inst = instantiate("sms.delete_thread", 0)
    spec = TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=inst.step_budget,
                    template_id=inst.template.id, seed=0, app="sms")
    attempt = _attempt(spec, inst.make_phone(), ["Clock"])
    shortest = ProgrammaticCritic(hint_steps=3).evaluate(attempt).hint.hint_summary
    direct = ProgrammaticCritic(hint_steps=3, direct_plans=True).evaluate(attempt).hint.hint_summary
    assert "long press" in shortest
    assert direct.startswith("On 'launcher', click 'Messages'. On 'inbox', click ") and "long press" not in direct


def test_a_plan_goes_on_into_a_dialog_over_the_same_screen():
    inst = instantiate("calendar.delete", 0)  # the event page's Delete opens a dialog whose Delete confirms
    spec = TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=inst.step_budget,
                    template_id=inst.template.id, seed=0, app="calendar")
    summary = ProgrammaticCritic(hint_steps=6).evaluate(_attempt(spec, inst.make_phone(), ["Clock"])).hint.hint_summary
    assert summary.endswith("On 'event', click 'Delete'. On 'event', click 'Delete'.")
    # a screen that comes back after a step without an element (a scroll of the contact list) ends it
    edit = instantiate("contacts.edit_phone", 0)
    spec = TaskSpec(task_id=edit.id, instruction=edit.instruction, step_budget=edit.step_budget,
                    template_id=edit.template.id, seed=0, app="contacts")
    scrolled = ProgrammaticCritic(hint_steps=6, direct_plans=True).evaluate(
        _attempt(spec, edit.make_phone(), ["Clock"])).hint.hint_summary
    assert scrolled == "On 'launcher', click 'Contacts'. On 'list', swiping up."


def test_hint_from_start_names_the_steps_done_right_before_the_fix():
    attempt = _attempt(_goal_task("wifi"), Phone(0), ["Settings", "Display"])
    fix = ProgrammaticCritic().evaluate(attempt).hint.hint_summary
    whole = ProgrammaticCritic(from_start=True).evaluate(attempt).hint
    assert whole.hint_summary == f"On 'launcher', click 'Settings'. {fix}"
    assert whole.key_mistake.startswith("step 2: click 'Display'")  # the mistake is still the wrong step
    assert hint_targets(whole.hint_summary)[0] == ("launcher", "Settings")
    # a wrong first step leaves nothing before the fix
    wrong_first = _attempt(_goal_task("wifi"), Phone(0), ["Clock"])
    assert (ProgrammaticCritic(from_start=True).evaluate(wrong_first).hint.hint_summary
            == ProgrammaticCritic().evaluate(wrong_first).hint.hint_summary)



def test_the_default_hint_is_the_corrective_hint_in_the_full_prompt_4_schema():
    """The rollouts' default: the key mistake at the first wrong step and the one action to take
    there (MobileForge §2.3.2), every field with content from the attempt; not the solver's plan."""
    from assets.rollouts import RolloutAssetConfig

    defaults = RolloutAssetConfig()
    critic = ProgrammaticCritic(0, defaults.hint_steps, defaults.direct_plans, defaults.hint_from_start)
    # right, wrong (Display), then wrong again on the display screen
    attempt = _attempt(_goal_task("wifi"), Phone(0), ["Settings", "Display", "Dark theme"])
    hint = critic.evaluate(attempt).hint
    assert hint.key_mistake.startswith("step 2: click 'Display' on the settings 'main' screen; did not move closer")
    assert hint.what_to_avoid == ["click 'Display' on the 'main' screen", "click 'Dark theme' on the 'display' screen"]
    assert hint.suggested_approach == ["on the settings 'main' screen, click 'Network & internet'"]
    assert hint.important_insights == ["goal not reached: progress 0.00, attempt ended by budget",
                                       "step 1 moved closer to the goal: click 'Settings' on 'launcher'",
                                       "on the settings 'main' screen the goal was 2 action(s) away"]
    assert hint.hint_summary == "On 'main', click 'Network & internet'."
    oracle = ProgrammaticCritic(0, 12, True, True).evaluate(attempt).hint  # the oracle-plans ablation
    assert oracle.hint_summary == ("On 'launcher', click 'Settings'. On 'main', click 'Network & internet'. "
                                   "On 'network', click 'Wi-Fi'.")


def test_an_attempt_of_right_steps_that_ran_out_gets_the_next_action_from_where_it_stopped():
    attempt = _attempt(_goal_task("wifi"), Phone(0), ["Settings"])  # right, then the budget ended
    feedback = ProgrammaticCritic().evaluate(attempt)
    assert feedback.decision == 0 and all(s.reasonable for s in feedback.step_analysis)
    hint = feedback.hint
    assert hint.key_mistake == "the step budget ran out on the settings 'main' screen before the goal was reached"
    assert hint.suggested_approach == ["on the settings 'main' screen, click 'Network & internet'"]
    assert hint.hint_summary == "On 'main', click 'Network & internet'."
    assert "step 1 moved closer to the goal: click 'Settings' on 'launcher'" in hint.important_insights
