"""The programmatic critic marks the steps taken after the goal already held (`goal_held`), the
steps the step datasets turn into "finish the task"."""

from __future__ import annotations

from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import TaskSpec
from phonesim.phone import Phone
from phonesim.tasks import instantiate
from tests.ops.judging.test_programmatic_hints import _attempt


def test_steps_after_a_toggle_reached_its_goal_are_marked_goal_held():
    inst = instantiate("settings.toggle_wifi", 0)
    spec = TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=8, template_id=inst.template.id,
                    seed=0, app="settings")
    # Wi-Fi goes off at the fourth tap; the policy taps the switch twice more (on, off again)
    attempt = _attempt(spec, inst.make_phone(), ["Settings", "Network & internet", "Wi-Fi", "Use Wi-Fi", "Use Wi-Fi",
                                                 "Use Wi-Fi"])
    labels = ProgrammaticCritic().evaluate(attempt).step_analysis
    assert [s.goal_held for s in labels] == [False, False, False, False, True, False]
    assert [s.reasonable for s in labels] == [True, True, True, True, False, True]  # why "reasonable" is not enough


def test_a_goal_screen_task_is_held_from_the_step_after_the_screen_opened():
    spec = TaskSpec(task_id="nav-wifi", instruction="In Settings, open Wi-Fi.", step_budget=6, app="settings",
                    params={"goal_screen": "wifi"})
    labels = ProgrammaticCritic().evaluate(
        _attempt(spec, Phone(0), ["Settings", "Network & internet", "Wi-Fi", "Use Wi-Fi"])).step_analysis
    assert [s.goal_held for s in labels] == [False, False, False, True]
