"""The programmatic critic's hints name the element to use, for template tasks (from the
solver) and for goal-screen curriculum tasks (the tap that brings the goal screen closest)."""

from __future__ import annotations

import json

from ops.actions import Action, ActionType
from ops.critic.programmatic import ProgrammaticCritic
from ops.episode import AttemptRecord, GroundTruth, StepRecord, TaskSpec
from ops.prompts import element_name, hint_target
from phonesim.phone import Phone


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
    assert hint_target(feedback.hint.hint_summary) == ("launcher", "Settings")


def test_goal_screen_task_hint_inside_the_app_names_the_next_row():
    phone = Phone(0)
    feedback = ProgrammaticCritic().evaluate(_attempt(_goal_task("wifi"), phone, ["Settings", "Display"]))
    assert [s.reasonable for s in feedback.step_analysis] == [True, False]
    screen, name = hint_target(feedback.hint.hint_summary)
    assert screen == "main"
    # tapping the named row really brings Wi-Fi closer from the main screen
    restored = Phone(0)
    restored.restore(json.loads(_attempt(_goal_task("wifi"), Phone(0), ["Settings"]).final_state))
    obs = restored.observe()
    restored.step(Action(ActionType.CLICK, element=next(e["index"] for e in obs.elements if element_name(e) == name)))
    assert restored.observe().screen in ("network", "wifi")
