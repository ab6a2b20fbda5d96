"""`AdbEnvironment`: an Android device (emulator, phone, or the simulator served by
`mobileforge sim adb-server`) behind the `Environment` interface, on adbutils — the twin of
`ops.environments.simulator.SimEnvironment`.

- Observation, in one shell command (`ops.environments.adb_observation`): `uiautomator dump` and the
  dumped file's text, parsed into the simulator's element format after MobileRL appendix C preprocessing
  (`ops.environments.a11y_tree`); `dumpsys window` for the focused package/activity (app name, screen =
  activity); `screencap -p`.
- Actions: tap / long press (`input swipe` on one point, `long_press_ms`) / double tap (two
  taps) / swipe / drag, `input text` for ASCII; other text goes through the ADBKeyboard IME's
  `ADB_INPUT_B64` broadcast, which needs `com.android.adbkeyboard` installed and selected as
  the input method (docs/devices.md), else the step is a no-op saying so. Keys and system
  buttons by `input keyevent`, apps by `monkey -p <package>`.
- Reset: `am force-stop` + `pm clear` of the task's app, then HOME (tasks start at the home
  screen, as in the simulator); `launch(app)` clears and starts the app. On the served
  simulator, reset loads the task's initial state instead (its emulator snapshot, in effect).
- Every adb call has an explicit timeout (adbutils' default is 600 s). Dumps that fail
  ("could not get idle state", "null root node") or come back unchanged right after an action
  (a stale dump) are retried. A device that is gone raises `DeviceLost`, other adb failures
  `DeviceError`: infrastructure failures, never the policy's.
- Ground truth: with `simulator=True` (`MOBILEFORGE_ENV=adb-simulator`, the served simulator as the
  simulator's twin), the task's judge on the server's phonesim state (read through its
  `phonesim:state` service); otherwise there is none and `ground_truth` returns None: the critic
  decides. Only that mode imports anything of the simulator: on `adb`, the served simulator is a
  device like any other.
- Exploration (MobileForge §2.2): anchors are the package's activities (`dumpsys package`);
  after `launch(app)` a snapshot is the action prefix since the launch, and restoring it
  relaunches the app from a clean state and replays the prefix — a device's state is not data.
- Safety: with a `SafetyGuard` (on by default for devices, `ops.environments.safety_guard`), an action the
  deny list names is not executed; the step records `blocked_by_guard: <rule>`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import adbutils
from adbutils.errors import AdbError

from ops.environments.a11y_tree import HierarchyError, parse_hierarchy, select_elements
from ops.environments.adb_client import BoundedClient
from ops.environments.adb_input import BUTTON_KEYCODES, AdbInput
from ops.environments.adb_observation import (DUMP_COMMAND, DUMP_FAILURES, focused_window, split_dump,
                                              split_screenshot)
from ops.actions import GRID, Action
from ops.agent.episode import Anchor, EnvStep, GroundTruth, Observation, TaskSpec
from ops.environments.device_pool import health_problem
from ops.environments.infrastructure import DeviceError, DeviceLost
from ops.environments.safety_guard import SafetyGuard, elements_at

if TYPE_CHECKING:
    from ops.environments.simulator import SimEnvironment

_SIZE = re.compile(r"(?:Override|Physical) size: (\d+)x(\d+)")
_VERSION = re.compile(r"versionName=(\S+)")
REPLAY = "replay"  # key of an exploration snapshot: {"replay": {"app": ..., "actions": [...]}}


@dataclass(frozen=True)


class DeviceApp:
    """An app on the device: the name tasks use, its package, its launcher label."""

    name: str
    package: str
    label: str = ""
    launch_activity: str | None = None  # started with `am start -n` instead of the launcher entry


@dataclass(frozen=True)


class AdbEnvConfig:
    """One device and how to drive it. Timeouts are seconds; every adb call has one."""

    serial: str
    host: str = "127.0.0.1"
    port: int = 5037
    apps: tuple[DeviceApp, ...] = ()
    simulator: bool = False  # the device is the served simulator: ground truth from its state
    world_seed: int = 0  # the served simulator's world (simulator only)
    command_timeout_s: float = 10.0
    dump_timeout_s: float = 20.0
    dump_retries: int = 3  # extra attempts after a failed dump
    stale_retries: int = 1  # extra dumps when one is unchanged right after an action
    retry_delay_s: float = 0.5
    settle_s: float = 0.5  # wait after an action before observing (animations)
    long_press_ms: int = 800
    swipe_ms: int = 300
    wait_s: float = 1.0  # a wait action without a duration
    max_wait_s: float = 10.0
    guard: SafetyGuard | None = None  # checks every action before it is executed

    def __post_init__(self) -> None:
        for name in ("command_timeout_s", "dump_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"AdbEnvConfig.{name} must be positive, got {getattr(self, name)}")
        if self.long_press_ms < 500:
            raise ValueError(f"AdbEnvConfig.long_press_ms must be >= 500 (Android's long-press timeout), "
                             f"got {self.long_press_ms}")


@dataclass


class DeviceStats:
    """Counts of what it took to observe: retries tell how flaky a device is."""

    dumps: int = 0
    dump_retries: int = 0
    stale_dumps: int = 0
    commands: int = 0
    blocked: int = 0  # actions the safety guard stopped
    replays: int = 0  # exploration restores by relaunch + replay


@dataclass


class _Shell:
    code: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return (self.stdout + self.stderr).decode("utf-8", errors="replace")


class AdbEnvironment(AdbInput):
    """One Android device over adb; create one per concurrent episode (one per device)."""

    def __init__(self, config: AdbEnvConfig) -> None:
        self.config = config
        self.serial = config.serial
        self.stats = DeviceStats()
        self._client = BoundedClient(config.host, config.port,
                                      max(config.command_timeout_s, config.dump_timeout_s))
        self._device = adbutils.AdbDevice(self._client, serial=config.serial)
        self._by_name = {key.lower(): app for app in config.apps for key in (app.name, app.label, app.package)
                         if key}
        self._by_package = {app.package: app for app in config.apps}
        self._size: tuple[int, int] | None = None
        self._judge: SimEnvironment | None = None
        self._observation: Observation | None = None
        self._last_xml: str | None = None
        self._acted = False
        self._unicode_ime: bool | None = None
        self._foreground = ""  # package in front at the last observation
        self._launched: str | None = None  # the app an exploration launched; None in episodes
        self._prefix: list[Action] = []  # actions since that launch, targets resolved to points

    # --- adb plumbing -----------------------------------------------------------------------------

    def _failure(self, what: str, exc: Exception) -> DeviceError:
        """`DeviceLost` when the server no longer lists the device, else `DeviceError`."""
        try:
            states = {info.serial: info.state for info in self._client.list()}
        except (AdbError, OSError) as err:
            return DeviceLost(self.serial, f"{what}: adb server unreachable ({err})")
        state = states.get(self.serial)
        if state != "device":
            return DeviceLost(self.serial, f"{what}: device {state or 'not listed'} ({exc})")
        return DeviceError(self.serial, f"{what}: {type(exc).__name__}: {exc}")

    def _shell(self, command: str, timeout: float | None = None) -> _Shell:
        """Run a shell command (shell protocol v2: separate stderr, exit status)."""
        self.stats.commands += 1
        try:
            result = self._device.shell2(command, timeout=timeout or self.config.command_timeout_s,
                                         encoding=None, v2=True)
        except (AdbError, OSError, EOFError) as exc:
            raise self._failure(command.split(" ", 1)[0], exc) from exc
        return _Shell(result.returncode, result.stdout, result.stderr)

    def _control(self, verb: str, body: Any = None) -> Any:
        """A `phonesim:<verb>` request to the served simulator (`phonesim.adb.control`)."""
        from phonesim.adb import control

        try:
            with self._device.open_transport(timeout=self.config.command_timeout_s) as connection:
                connection.send_command(f"phonesim:{verb}")
                connection.check_okay()
                return control.exchange(connection.conn, body)
        except control.ControlError as exc:
            raise DeviceError(self.serial, f"phonesim:{verb} refused: {exc}") from exc
        except (AdbError, OSError, EOFError) as exc:
            raise self._failure(f"phonesim:{verb}", exc) from exc

    @property
    def size(self) -> tuple[int, int]:
        """Screen size in pixels (`wm size`, read once)."""
        if self._size is None:
            match = _SIZE.search(self._shell("wm size").text)
            if match is None:
                raise DeviceError(self.serial, "wm size printed no size")
            self._size = (int(match.group(1)), int(match.group(2)))
        return self._size

    def _launch_command(self, package: str) -> str:
        """Start `package`: its configured launch activity, else its launcher entry."""
        activity = self._by_package[package].launch_activity if package in self._by_package else None
        if activity:
            return f"am start -n {package}/{activity}"
        return f"monkey -p {package} -c android.intent.category.LAUNCHER 1"

    def _package(self, app: str) -> str | None:
        found = self._by_name.get(app.strip().lower())
        return found.package if found else None

    # --- Environment ---------------------------------------------------------------------------------

    def reset(self, task: TaskSpec) -> Observation:
        self._observation, self._last_xml, self._acted = None, None, False
        self._launched, self._prefix = None, []
        if self.config.simulator:
            from ops.environments.simulator import SimEnvironment

            self._judge = SimEnvironment(size=self.size, world_seed=self.config.world_seed)
            self._judge.reset(task)
            self._load_state(json.loads(self._judge.snapshot()))
        else:
            package = self._package(task.app) if task.app else None
            if package:
                self._shell(f"am force-stop {package}")
                self._shell(f"pm clear {package}")
            self._shell(f"input keyevent {BUTTON_KEYCODES['home']}")
        return self.observe()

    def step(self, action: Action) -> EnvStep:
        if self.config.guard is not None:
            block = self._guard_check(action)
            if block is not None:
                self.stats.blocked += 1
                return EnvStep(False, block.reason, ends_episode=self.config.guard.config.end_episode)
        replayable = self._replayable(action) if self._launched is not None else None
        result = self._act(action)
        self._acted = True
        if replayable is not None and result.ok:
            self._prefix.append(replayable)
        return result

    def observe(self) -> Observation:
        if self._acted and self.config.settle_s:
            time.sleep(self.config.settle_s)
        xml, focus, screenshot = self._dump()
        tree = parse_hierarchy(xml)
        package, activity = focused_window(focus)
        self._foreground = package
        app = self._by_package[package].name if package in self._by_package else package
        self._observation = Observation(screenshot_png=screenshot, elements=select_elements(tree, self.size),
                                        a11y=tree, app=app, screen=activity.rsplit(".", 1)[-1])
        self._acted = False
        return self._observation

    def snapshot(self) -> str | None:
        """While exploring (after `launch`): the app and the action prefix since, which `restore`
        replays. In an episode: the served simulator's phonesim state (as `SimEnvironment.snapshot`);
        None on a real device, whose state is not data."""
        if self._launched is not None:
            return json.dumps({REPLAY: {"app": self._launched, "actions": [a.to_dict() for a in self._prefix]}},
                              separators=(",", ":"), ensure_ascii=False)
        if not self.config.simulator:
            return None
        return json.dumps(self._control("state")["state"], separators=(",", ":"))

    def restore(self, snapshot: str) -> None:
        """Go back to a snapshot: an exploration prefix by relaunch + replay (MobileForge §2.2),
        a served-simulator state by loading it. A real device has no state snapshots."""
        data = json.loads(snapshot)
        if isinstance(data, dict) and REPLAY in data:
            self._replay(data[REPLAY]["app"], [Action.from_dict(a) for a in data[REPLAY]["actions"]])
            return
        if not self.config.simulator:
            raise NotImplementedError(f"{self.serial}: a real device restores by relaunch and replay, "
                                      "not from a state snapshot")
        self._load_state(data)

    def _load_state(self, state: Any) -> None:
        self._control("restore", {"world_seed": self.config.world_seed, "state": state})
        self._acted = True

    def _replay(self, app: str, actions: list[Action]) -> None:
        """Relaunch `app` from a clean state and redo `actions`, then observe where that led."""
        self.stats.replays += 1
        self.launch(app)
        for index, action in enumerate(actions):
            if index and self.config.settle_s:  # the previous action's screen settles (the last one's: observe)
                time.sleep(self.config.settle_s)
            self._prefix.append(action)
            result = self._act(action)
            self._acted = True
            if not result.ok:
                raise DeviceError(self.serial, f"replay of {action.type.value} {action.args} in {app} failed: "
                                               f"{result.reason}")
        self.observe()

    def _replayable(self, action: Action) -> Action:
        """`action` with an element target turned into its point on the grid, so a replay needs no
        observation between its actions."""
        if action.element is None or self._observation is None or action.element >= len(self._observation.elements):
            return action
        x1, y1, x2, y2 = self._observation.elements[action.element]["bounds"]
        width, height = self.size
        point = (round((x1 + x2) / 2 * GRID / width), round((y1 + y2) / 2 * GRID / height))
        return Action.from_dict({"type": action.type.value,
                                 "args": {**{k: v for k, v in action.args.items() if k != "element"},
                                          "point": list(point)}})

    def _guard_check(self, action: Action):
        """The guard's verdict on `action` in the current observation."""
        targets: list[dict[str, Any]] = []
        elements = self._observation.elements if self._observation else []
        if action.element is not None and action.element < len(elements):
            targets = [elements[action.element]]
        elif action.point is not None:
            targets = elements_at(elements, *self._pixels(action.point))
        app_package = self._package(action.app) if action.app else None
        return self.config.guard.check(action, targets, self._foreground, app_package)

    def ground_truth(self, task: TaskSpec, answer: str | None, terminated: bool,
                     n_steps: int) -> GroundTruth | None:
        """The task's judge on the served simulator's state; None on a real device (no judge
        there: the critic decides)."""
        if self._judge is None:
            return None
        self._judge.restore(self.snapshot())
        return self._judge.ground_truth(task, answer, terminated, n_steps)

    # --- ExplorableEnvironment ------------------------------------------------------------------------

    def launch(self, app: str) -> Observation:
        """Start `app` from a clean state: `pm clear` and launch (served simulator: a fresh phone)."""
        self._observation, self._last_xml = None, None
        if self.config.simulator:
            from ops.environments.simulator import SimEnvironment

            fresh = SimEnvironment(size=self.size, world_seed=self.config.world_seed)
            fresh.launch(app)
            self._load_state(json.loads(fresh.snapshot()))
            self._launched, self._prefix = app, []
            return self.observe()
        package = self._package(app)
        if package is None:
            raise ValueError(f"{self.serial}: unknown app {app!r}; configured: {sorted(a.name for a in self.config.apps)}")
        self._shell(f"am force-stop {package}")
        self._shell(f"pm clear {package}")
        self._shell(self._launch_command(package))
        self._acted = True
        self._launched, self._prefix = app, []
        return self.observe()

    def anchors(self, app: str) -> list[Anchor]:
        """The package's activities (`dumpsys package`), MobileForge §2.2's structural anchors."""
        package = self._package(app)
        if package is None:
            return []
        text = self._shell(f"dumpsys package {package}").text
        table = text.split("\nPackages:", 1)[0]
        activities = dict.fromkeys(m.group(1) for m in re.finditer(rf"{re.escape(package)}/(\S+)", table))
        return [Anchor(name.rsplit(".", 1)[-1], name.rsplit(".", 1)[-1]) for name in activities]

    def package_version(self, package: str) -> str | None:
        """The installed versionName of `package` (`dumpsys package`), None when not installed."""
        match = _VERSION.search(self._shell(f"dumpsys package {package}").text)
        return match.group(1) if match else None

    def third_party_packages(self) -> list[str]:
        """The third-party packages the device lists (`pm list packages -3`)."""
        listed = self._shell("pm list packages -3").text
        return sorted(line.split(":", 1)[1].strip() for line in listed.splitlines() if line.startswith("package:"))

    def health(self) -> str | None:
        """Why this device should not take an episode (not booted, screen off), or None."""
        return health_problem(lambda command: self._shell(command).text)

    # --- observation -------------------------------------------------------------------------------

    def _dump(self) -> tuple[str, str, bytes]:
        """`DUMP_COMMAND` (one shell round trip), retried on failure and on a stale result: the hierarchy
        XML, the output of the focused-window query after it and the screenshot."""
        config, last_error, stale_left, focus, screenshot = self.config, "", self.config.stale_retries, "", b""
        for attempt in range(1 + config.dump_retries):
            if attempt:
                self.stats.dump_retries += 1
                time.sleep(config.retry_delay_s)
            self.stats.dumps += 1
            result = self._shell(DUMP_COMMAND, timeout=config.dump_timeout_s)
            text, shot = split_screenshot(result.stdout, result.stderr)
            xml, after, before = split_dump(text)
            if xml is None or any(f in before for f in DUMP_FAILURES):
                last_error = before.strip() or f"no hierarchy in the output (exit status {result.code})"
                continue
            try:
                parse_hierarchy(xml)
            except HierarchyError as exc:
                last_error = str(exc)
                continue
            focus, screenshot = after, shot
            if self._acted and xml == self._last_xml and stale_left:
                stale_left -= 1
                self.stats.stale_dumps += 1
                continue
            self._last_xml = xml
            return xml, focus, screenshot
        if self._last_xml is not None and not last_error:  # only stale answers: the action changed nothing
            return self._last_xml, focus, screenshot
        raise DeviceError(self.serial, f"uiautomator dump failed {1 + config.dump_retries} times: {last_error}")
