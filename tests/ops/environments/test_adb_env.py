"""AdbEnvironment against the served simulator: the same observations and verdicts as the
in-process SimEnvironment, dump retries, and a dropped device as an infrastructure failure."""

import io
import json
import time

import pytest
from PIL import Image

from ops.actions import Action
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp
from ops.environments.adb_observation import PNG_SIGNATURE, focused_window, split_dump, split_screenshot
from ops.environments.infrastructure import DeviceError, DeviceLost
from ops.agent.episode import TaskSpec
from ops.environments.simulator import SimEnvironment
from phonesim import instantiate
from phonesim.apps import load_apps
from phonesim.solver import shortest_path
from tests.support.adb_server import SIZE

APPS = tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())


def _env(server, serial="phonesim-1", **overrides) -> AdbEnvironment:
    settings = dict(serial=serial, port=server.port, apps=APPS, simulator=True, settle_s=0.0, retry_delay_s=0.0,
                    command_timeout_s=5.0)
    return AdbEnvironment(AdbEnvConfig(**{**settings, **overrides}))


def _pixels(png: bytes) -> bytes:
    """The screen as RGB bytes: a device's screencap is an RGBA PNG, phonesim's a palette PNG."""
    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()


def _task(template_id: str, seed: int = 1) -> TaskSpec:
    instance = instantiate(template_id, seed)
    return TaskSpec(task_id=instance.id, instruction=instance.instruction, step_budget=instance.step_budget,
                    app=instance.apps[0], template_id=template_id, seed=seed)


def _plan(task: TaskSpec) -> list[Action]:
    instance = instantiate(task.template_id, task.seed)
    return shortest_path(instance.make_phone(), instance)


def test_reset_step_observe_and_verdict_match_the_simulator(server):
    task = _task("contacts.edit_phone")
    adb, sim = _env(server), SimEnvironment(size=SIZE)
    first, expected = adb.reset(task), sim.reset(task)
    assert first.elements == expected.elements and _pixels(first.screenshot_png) == _pixels(expected.screenshot_png)
    plan = _plan(task)
    for action in plan:
        assert adb.step(action).ok
        sim.step(action)
        seen, expected = adb.observe(), sim.observe()
        assert seen.elements == expected.elements and seen.screen == expected.screen
    assert adb.snapshot() == sim.snapshot()
    verdict = adb.ground_truth(task, None, True, len(plan))
    assert verdict == sim.ground_truth(task, None, True, len(plan)) and verdict.success


def test_an_unfinished_attempt_is_judged_a_failure_by_both(server):
    task = _task("contacts.edit_phone")
    adb, sim = _env(server, "phonesim-2"), SimEnvironment(size=SIZE)
    adb.reset(task)
    sim.reset(task)
    for action in _plan(task)[:2] + [Action(type="terminate", status="success")]:
        adb.step(action)
        sim.step(action)
    verdict = adb.ground_truth(task, None, True, 3)
    assert verdict == sim.ground_truth(task, None, True, 3)
    assert not verdict.success and verdict.false_complete


def test_actions_by_element_text_and_keys(server):
    env = _env(server)
    env.reset(TaskSpec(task_id="free", instruction="", step_budget=10))
    assert env.step(Action(type="open_app", app="Contacts")).ok
    obs = env.observe()
    assert (obs.app, obs.screen) == ("contacts", "list")
    phone = server.device("phonesim-1").phone
    search = next(e for e in obs.elements if e["class"].endswith("EditText"))
    assert env.step(Action(type="type", element=search["index"], text="Amelia D")).ok  # `input text`
    assert env.step(Action(type="key", key="backspace")).ok
    assert env.step(Action(type="type", text="Dž")).ok  # not ASCII: the ADBKeyboard broadcast
    assert phone.top_page()["fields"]["q"] == "Amelia Dž"
    assert env.step(Action(type="system_button", button="home")).ok
    assert env.observe().screen == "launcher"
    assert not env.step(Action(type="open_app", app="Nonexistent")).ok
    assert not env.step(Action(type="click", element=999)).ok
    assert [a.title for a in env.anchors("contacts")][:2] == ["list", "detail"]


def test_dump_failures_and_stale_dumps_are_retried(server):
    env = _env(server)
    env.reset(TaskSpec(task_id="free", instruction="", step_budget=10))
    device = server.device("phonesim-1")
    device.dump_faults = ["ERROR: could not get idle state.", "ERROR: null root node returned by UiTestAutomationBridge."]
    env.step(Action(type="open_app", app="contacts"))
    device.stale_dumps = 1  # the first dump after the action still shows the launcher
    assert env.observe().app == "contacts"
    assert (env.stats.dump_retries, env.stats.stale_dumps) == (3, 1)
    device.dump_faults = ["ERROR: could not get idle state."] * 9
    with pytest.raises(DeviceError, match="dump failed 4 times") as failure:
        env.observe()
    assert not isinstance(failure.value, DeviceLost)


def test_one_shell_output_splits_into_message_hierarchy_focused_window_and_screenshot():
    """A screen that shows "ERROR" is a screen, not a failed dump: only uiautomator's message is checked."""
    xml = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
           "<hierarchy rotation=\"0\"><node text=\"ERROR 404\" /></hierarchy>")
    text = f"UI hierchary dumped to: /sdcard/window_dump.xml\n{xml}  mCurrentFocus=Window{{1d2 u0 com.x.app/.Main}}\n"
    png = PNG_SIGNATURE + b"\x00IHDR</hierarchy>\xff"
    assert split_screenshot(text.encode() + png, b"") == (text, png)
    assert split_screenshot(text.encode(), b"screencap: no display\n") == (text + "screencap: no display\n", b"")
    parsed, after, before = split_dump(text)
    assert parsed == xml and before == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    assert focused_window(after) == ("com.x.app", "com.x.app.Main")
    failed = "ERROR: could not get idle state.\n  mCurrentFocus=Window{1d2 u0 com.x.app/.Main}\n"
    assert split_dump(failed) == (None, "", "ERROR: could not get idle state.\n  ")
    assert focused_window("") == ("", "")

def test_a_dropped_device_raises_device_lost(server):
    env = _env(server, "phonesim-2")
    env.reset(_task("contacts.edit_phone"))
    server.drop("phonesim-2")
    with pytest.raises(DeviceLost, match="not listed"):
        env.step(Action(type="system_button", button="back"))
    with pytest.raises(DeviceLost):
        env.observe()


def test_a_stopped_server_raises_device_lost_without_starting_a_real_one(server):
    env = _env(server)
    env.reset(TaskSpec(task_id="free", instruction="", step_budget=10))
    server.stop()
    started = time.monotonic()
    with pytest.raises(DeviceLost, match="unreachable"):
        env.observe()
    assert time.monotonic() - started < 5


def test_a_real_device_has_no_ground_truth_and_resets_by_clearing(server):
    env = _env(server, simulator=False)
    phone = server.device("phonesim-1").phone
    phone.launch("contacts")
    phone.state["data"]["contacts"] = {"edited": True}
    task = _task("contacts.edit_phone")
    obs = env.reset(task)
    assert obs.screen == "launcher" and phone.state["data"]["contacts"] != {"edited": True}
    assert env.snapshot() is None and env.ground_truth(task, None, True, 0) is None
    assert env.launch("contacts").app == "contacts"




def test_exploration_restores_by_relaunch_and_replay_of_the_action_prefix(server):
    env = _env(server)
    first = env.launch("contacts")
    row = next(e for e in first.elements if e.get("clickable") and e["text"])
    env.step(Action(type="click", element=row["index"]))
    inside = env.observe()
    snapshot = env.snapshot()
    assert json.loads(snapshot)["replay"]["app"] == "contacts"  # an action prefix, not device state
    env.step(Action(type="system_button", button="back"))
    env.step(Action(type="system_button", button="home"))
    env.restore(snapshot)
    again = env.observe()
    assert (again.screen, again.elements) == (inside.screen, inside.elements) and env.stats.replays == 1


def test_explore_app_on_a_device_anchors_on_activities_and_replays(server):
    from ops.exploration.explorer import ExplorationConfig, explore_app

    env = _env(server)
    transitions = explore_app(env, "clock", ExplorationConfig(max_depth=2, max_transitions=6, max_branches=3))
    assert len(transitions) == 6 and env.stats.replays >= 6
    assert transitions[0].goal.startswith("In clock, open '")  # a goal per activity of `dumpsys package`
    by_id = {t.transition_id: t for t in transitions}
    for t in transitions:  # a child starts where its parent ended: the replay restored that state
        if t.parent_id:
            assert t.before.elements == by_id[t.parent_id].after.elements
