"""Scripted attempts at goal-state curriculum tasks, recorded the way rollouts record them."""

from __future__ import annotations

from ops.actions import Action, ActionType
from ops.curriculum import CurriculumTask
from ops.agent.episode import AttemptRecord, StepRecord
from ops.agent.hint_marks import element_name
from ops.environments.simulator import SimEnvironment
from phonesim.apps import load_apps


def walk(env: SimEnvironment, task: CurriculumTask, taps: list[str]) -> list[StepRecord]:
    """Open the task's app, then tap the elements with these first lines."""
    steps = []
    for t, what in enumerate(["open"] + taps):
        obs = env.observe()
        state = env.snapshot()
        if what == "open":
            action = Action(ActionType.OPEN_APP, app=load_apps()[task.app].label)
        else:
            action = Action(ActionType.CLICK, element=next(e["index"] for e in obs.elements if element_name(e) == what))
        result = env.step(action)
        steps.append(StepRecord(step=t, screenshot_png=b"", elements=obs.elements, a11y=None, app=obs.app,
                                screen=obs.screen, prompt="", raw_output="", action=action.to_dict(), parse_error=None,
                                conclusion="", latency_s=0.0, env_ok=result.ok, env_reason=result.reason, state=state))
    return steps


def attempt(env: SimEnvironment, task: CurriculumTask, taps: list[str]) -> AttemptRecord:
    """A budget-ended attempt of `walk`, judged by the simulator."""
    spec = task.to_task_spec()
    env.reset(spec)
    steps = walk(env, task, taps)
    truth = env.ground_truth(spec, answer=None, terminated=False, n_steps=len(steps))
    return AttemptRecord(task=spec, attempt=1, policy_version="p", hints=[], steps=steps, end_reason="budget",
                         answer=None, final_state=env.snapshot(), ground_truth=truth)
