"""The safety guard on hand-made screens, and through AdbEnvironment: a blocked action is not
executed, it is recorded as blocked_by_guard with its rule, and the episode goes on or ends."""

import pytest

from ops.actions import Action
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import TaskSpec
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.environments.safety_guard import GuardConfig, SafetyGuard, elements_at
from phonesim.apps import load_apps
from tests.support.scripted_policy import RandomClickPolicy

SHOP, MESSAGES, NOTES = "com.example.shop", "com.google.android.apps.messaging", "com.example.notes"


def _element(index, text="", desc="", resource_id="", bounds=(0, 0, 100, 100)):
    return {"index": index, "text": text, "desc": desc, "resource_id": resource_id, "bounds": list(bounds)}


SCREEN = [
    _element(0, bounds=(0, 0, 1000, 2000)),  # a container under everything
    _element(1, "Pay now", bounds=(0, 0, 500, 100)),
    _element(2, "Payment history", bounds=(0, 100, 500, 200)),
    _element(3, desc="Factory  reset", bounds=(0, 200, 500, 300)),
    _element(4, "", resource_id="btn_purchase_premium", bounds=(0, 300, 500, 400)),
    _element(5, "Send", bounds=(0, 400, 500, 500)),
    _element(6, "Delete account", bounds=(0, 500, 500, 600)),
]
GUARD = SafetyGuard(GuardConfig(target_packages=(SHOP, MESSAGES, NOTES)))


def _tap(index):
    return Action(type="click", element=index)


@pytest.mark.parametrize("index, rule", [(1, "deny_label"), (3, "deny_label"), (4, "deny_id"), (6, "deny_label")])
def test_denied_labels_and_ids_are_blocked(index, rule):
    block = GUARD.check(_tap(index), [SCREEN[index]], SHOP)
    assert block is not None and block.rule == rule
    assert block.reason.startswith(f"blocked_by_guard: {rule} (")


def test_words_are_matched_whole_and_other_elements_pass():
    assert GUARD.check(_tap(2), [SCREEN[2]], SHOP) is None  # "Payment history" is not "pay"
    assert GUARD.check(_tap(5), [SCREEN[5]], NOTES) is None  # "Send" outside messaging apps
    assert GUARD.check(Action(type="system_button", button="back"), [], SHOP) is None


def test_send_in_a_messaging_app_is_blocked():
    block = GUARD.check(_tap(5), [SCREEN[5]], MESSAGES)
    assert block.rule == "send_to_contact" and MESSAGES in block.detail


def test_a_point_is_checked_against_every_element_under_it():
    under = elements_at(SCREEN, 250, 50)
    assert [e["index"] for e in under] == [1, 0]  # smallest first
    assert GUARD.check(Action(type="click", point=(125, 25)), under, SHOP).rule == "deny_label"


def test_leaving_the_target_apps_is_blocked():
    assert GUARD.check(Action(type="open_app", app="Bank"), [], SHOP, None).rule == "leave_target_apps"
    assert GUARD.check(Action(type="open_app", app="Shop"), [], SHOP, SHOP) is None
    foreign = GUARD.check(Action(type="click", point=(10, 10)), [], "com.android.chrome")
    assert foreign.rule == "leave_target_apps" and "com.android.chrome" in foreign.detail
    assert GUARD.check(Action(type="system_button", button="back"), [], "com.android.chrome") is None
    assert GUARD.check(Action(type="click", point=(10, 10)), [], "com.android.launcher3") is None


def test_denied_action_types_and_a_bad_config():
    guard = SafetyGuard(GuardConfig(deny_action_types=("long_press",)))
    assert guard.check(Action(type="long_press", element=2), [SCREEN[2]], SHOP).rule == "action_type"
    with pytest.raises(ValueError, match="deny_action_types: unknown action types \\['swipe_up'\\]"):
        GuardConfig(deny_action_types=("swipe_up",))


APPS = tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())


def _env(server, guard: GuardConfig) -> AdbEnvironment:
    return AdbEnvironment(AdbEnvConfig(serial="phonesim-1", port=server.port, apps=APPS, simulator=True,
                                       settle_s=0.0, retry_delay_s=0.0, guard=SafetyGuard(guard)))


def test_a_blocked_action_is_not_executed_on_the_device(server):
    env = _env(server, GuardConfig(deny_labels=("contacts",)))
    home = env.reset(TaskSpec(task_id="free", instruction="", step_budget=5))
    icon = next(e for e in home.elements if e["text"] == "Contacts")
    result = env.step(Action(type="click", element=icon["index"]))
    assert not result.ok and not result.ends_episode
    assert result.reason == "blocked_by_guard: deny_label ('contacts' in 'Contacts')"
    assert env.observe().screen == "launcher" and env.stats.blocked == 1
    assert env.step(Action(type="open_app", app="clock")).ok  # other actions go on


def test_a_guard_that_ends_the_episode_ends_the_attempt(server, tmp_path):
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    policy = RandomClickPolicy(seed=0, stop_prob=0.0)
    task = TaskSpec(task_id="settings.airplane_on#0", instruction="Turn on airplane mode", step_budget=6,
                    app="settings", template_id="settings.airplane_on", seed=0)
    env = _env(server, GuardConfig(deny_action_types=("click",), end_episode=True))
    run_rollouts([task], lambda: env, policy, ProgrammaticCritic(), store, RolloutConfig(attempts=1))
    attempts, steps, _ = collect_tables(store, policy.version, [task])
    assert attempts["end_reason"].to_list() == ["blocked_by_guard"] and steps.height == 1
    assert steps["env_reason"][0].startswith("blocked_by_guard: action_type (click)")
    assert attempts["gt_success"].to_list() == [False]
