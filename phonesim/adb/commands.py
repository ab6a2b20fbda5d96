"""The Android shell commands a served phonesim device answers: `input`, `am`, `monkey`, `pm`,
`dumpsys`, `wm`, `getprop`, `screencap`, `uiautomator`. Output follows what a device prints
(Android 14, as far as clients parse it). Pixel coordinates become phonesim actions on its
0–1000 grid; apps are found by package, screens are their activities (`pkg/.screen`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib
import io
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from phonesim.actions import GRID
from phonesim.adb.device import ShellResult, SimDevice, normalize_path
from phonesim.adb.keycodes import key_action, parse_keycode
from phonesim.adb.uiautomator import hierarchy_xml
from phonesim.app import App
from phonesim.phone import Phone
from phonesim.system import LAUNCHER

DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
LONG_PRESS_MS = 500  # a swipe that stays put this long is a long press (ViewConfiguration)
TOUCH_SLOP_DP = 8  # movement below this is not a swipe (ViewConfiguration.getScaledTouchSlop)
CANVAS_DP_WIDTH = 360  # phonesim screens are laid out 360 dp wide
ADB_KEYBOARD = "com.android.adbkeyboard"  # the IME whose broadcasts type any Unicode text
SYSTEM_PACKAGES = ("android", "com.android.launcher", "com.android.systemui", ADB_KEYBOARD)
INPUT_SOURCES = frozenset({"touchscreen", "touchpad", "keyboard", "mouse", "stylus", "dpad", "gamepad",
                           "trackball", "joystick", "touchnavigation", "rotaryencoder"})

PROPERTIES = {
    "ro.product.model": "phonesim", "ro.product.name": "phonesim", "ro.product.device": "phonesim",
    "ro.product.brand": "MobileForge", "ro.product.manufacturer": "MobileForge",
    "ro.build.version.release": "14", "ro.build.version.sdk": "34", "ro.build.type": "userdebug",
    "ro.build.characteristics": "emulator", "ro.kernel.qemu": "0", "sys.boot_completed": "1",
}

Command = Callable[[SimDevice, list[str]], ShellResult]


def _out(text: str, code: int = 0) -> ShellResult:
    return ShellResult(text.encode("utf-8"), b"", code)


def _app_of(phone: Phone, package: str) -> App | None:
    return next((a for a in phone.apps.values() if a.package == package), None)


@lru_cache(maxsize=None)
def app_version(name: str) -> str:
    """versionName of a phonesim app: 1.0 plus a digest of its package's source files, so it
    changes exactly when the app's code does."""
    module = importlib.import_module(f"phonesim.apps.{name}")
    digest = hashlib.sha256()
    for path in sorted(Path(module.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return f"1.0.{digest.hexdigest()[:8]}"


def _window_token(*parts: str) -> str:
    return f"{zlib.crc32('/'.join(parts).encode()):08x}"[:7]


# --- input -----------------------------------------------------------------------------------

def _grid(phone: Phone, x: str, y: str) -> list[float]:
    width, height = phone.size
    return [min(max(float(x) * GRID / width, 0.0), GRID), min(max(float(y) * GRID / height, 0.0), GRID)]


def _input_usage(sub: str) -> ShellResult:
    return ShellResult.error(f"Error: Invalid arguments for command: {sub}\nUsage: input [<source>] [-d DISPLAY_ID] "
                             "<command> [<arg>...]\n  tap <x> <y>\n  swipe <x1> <y1> <x2> <y2> [duration(ms)]\n"
                             "  text <string>\n  keyevent [--longpress] <key code number or name> ...")


def _swipe_action(phone: Phone, nums: list[str], drag: bool) -> dict[str, Any]:
    x1, y1, x2, y2 = (float(v) for v in nums[:4])
    duration = float(nums[4]) if len(nums) > 4 else 300.0
    slop = TOUCH_SLOP_DP * phone.size[0] / CANVAS_DP_WIDTH
    start, end = _grid(phone, nums[0], nums[1]), _grid(phone, nums[2], nums[3])
    if abs(x2 - x1) <= slop and abs(y2 - y1) <= slop:
        kind = "long_press" if duration >= LONG_PRESS_MS else "click"
        return {"type": kind, "args": {"point": start}}
    return {"type": "drag" if drag else "swipe", "args": {"point": start, "end_point": end}}


def cmd_input(device: SimDevice, args: list[str]) -> ShellResult:
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        return _input_usage("")
    sub, rest, phone = args[0], args[1:], device.phone
    try:
        if sub == "tap" and len(rest) == 2:
            phone.step({"type": "click", "args": {"point": _grid(phone, *rest)}})
        elif sub in ("swipe", "draganddrop") and len(rest) in (4, 5):
            phone.step(_swipe_action(phone, rest, drag=sub == "draganddrop"))
        elif sub == "text" and rest:
            text = rest[0].replace("%s", " ")
            if not text.isascii():  # what `input text` does with characters no key map has
                return ShellResult.error("Exception occurred while executing 'text':\n"
                                         "java.lang.NullPointerException: Attempt to get length of null array", 255)
            phone.step({"type": "type", "args": {"text": text}})
        elif sub == "keyevent" and rest:
            codes = [parse_keycode(k) for k in rest if k != "--longpress"]
            if None in codes:
                return _input_usage(sub)
            for code in codes:
                action = key_action(code)
                if action is not None:
                    phone.step(action)
        else:
            return _input_usage(sub)
    except ValueError:
        return _input_usage(sub)
    return ShellResult()


# --- activities and packages ----------------------------------------------------------------------

def _force_stop(phone: Phone, app: App) -> None:
    os_ = phone.state["os"]
    os_["tasks"].pop(app.name, None)
    if app.name in os_["recents"]:
        os_["recents"].remove(app.name)
    if os_["foreground"] == app.name:
        os_["foreground"] = LAUNCHER
    phone.invalidate()


def _start_activity(phone: Phone, component: str) -> ShellResult:
    package, _, activity = component.partition("/")
    app = _app_of(phone, package)
    screen = activity.removeprefix(package).lstrip(".")
    if app is None or screen not in app.screens:
        return ShellResult(f"Starting: Intent {{ cmp={component} }}\n".encode(),
                           f"Error type 3\nError: Activity class {{{component}}} does not exist.\n".encode(), 1)
    spec = app.screens[screen]
    if spec.params:  # a screen that needs an entity (contact, note...) only opens from inside the app
        return ShellResult(f"Starting: Intent {{ cmp={component} }}\n".encode(),
                           f"java.lang.SecurityException: Permission Denial: starting Intent {{ cmp={component} }}"
                           f" not exported from uid 10100\n".encode(), 255)
    phone.step({"type": "open_app", "args": {"app": app.name}})
    if phone.current_screen != screen:
        phone.push_page(app.name, screen, {})
        phone.invalidate()
    return _out(f"Starting: Intent {{ cmp={component} }}\n")


def _broadcast(device: SimDevice, args: list[str]) -> ShellResult:
    action = args[args.index("-a") + 1] if "-a" in args and args.index("-a") + 1 < len(args) else ""
    extras = {args[i + 1]: args[i + 2] for i in range(len(args) - 2) if args[i] == "--es"}
    head = f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
    if action in ("ADB_INPUT_TEXT", "ADB_INPUT_B64") and "msg" in extras:
        try:
            text = (base64.b64decode(extras["msg"], validate=True).decode("utf-8") if action == "ADB_INPUT_B64"
                    else extras["msg"])
        except (binascii.Error, UnicodeDecodeError):
            return _out(head + "Broadcast completed: result=0\n")
        device.phone.step({"type": "type", "args": {"text": text}})
    return _out(head + "Broadcast completed: result=0\n")


def cmd_am(device: SimDevice, args: list[str]) -> ShellResult:
    phone = device.phone
    if not args:
        return ShellResult.error("usage: am [start|force-stop|broadcast] ...")
    sub, rest = args[0], args[1:]
    if sub in ("start", "start-activity"):
        if "-n" not in rest or rest.index("-n") + 1 >= len(rest):
            return ShellResult.error("Error: Activity not started, unable to resolve Intent (phonesim serves -n only)")
        component = rest[rest.index("-n") + 1]
        if "-S" in rest and (app := _app_of(phone, component.partition("/")[0])) is not None:
            _force_stop(phone, app)
        return _start_activity(phone, component)
    if sub == "force-stop" and rest:
        app = _app_of(phone, rest[-1])
        if app is not None:
            _force_stop(phone, app)
        return ShellResult()
    if sub == "broadcast":
        return _broadcast(device, rest)
    return ShellResult.error(f"Unknown command: {sub}", 255)


def cmd_monkey(device: SimDevice, args: list[str]) -> ShellResult:
    package = args[args.index("-p") + 1] if "-p" in args and args.index("-p") + 1 < len(args) else None
    app = _app_of(device.phone, package) if package else None
    if app is None:
        return _out("  bash arg: -p\n** No activities found to run, monkey aborted.\n", 251)
    device.phone.step({"type": "open_app", "args": {"app": app.name}})
    return _out(f"  bash arg: -p\n  bash arg: {package}\nEvents injected: 1\n"
                "## Network stats: elapsed time=4ms (0ms mobile, 0ms wifi, 4ms not connected)\n")


def _packages(device: SimDevice) -> list[str]:
    return sorted([a.package for a in device.phone.apps.values()] + list(SYSTEM_PACKAGES))


def cmd_pm(device: SimDevice, args: list[str]) -> ShellResult:
    phone = device.phone
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub == "clear" and rest:
        app = _app_of(phone, rest[-1])
        if app is None:
            return _out("Failed\n", 1)
        _force_stop(phone, app)
        phone.state["data"][app.name] = Phone(phone.world_seed, phone.size).state["data"][app.name]
        phone.invalidate()
        return _out("Success\n")
    if sub == "list" and rest[:1] == ["packages"]:
        return _out("".join(f"package:{p}\n" for p in _packages(device)))
    if sub == "path" and rest:
        if rest[-1] not in _packages(device):
            return ShellResult(code=1)
        return _out(f"package:/data/app/{rest[-1]}/base.apk\n")
    return ShellResult.error(f"Unknown command: {sub}" if sub else "usage: pm [list|path|clear] ...", 255)


# --- dumpsys, wm, getprop ---------------------------------------------------------------------------

def _focus(phone: Phone) -> tuple[str, str]:
    frame = phone.frame()
    return frame.package, f"{frame.package}.{frame.screen}"


def _dumpsys_window(device: SimDevice) -> str:
    package, activity = _focus(device.phone)
    token = _window_token(package, activity)
    width, height = device.phone.size
    window = f"Window{{{token} u0 {package}/{activity}}}"
    return (f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 {window}:\n"
            f"    mDisplayId=0 rootTaskId=1 mSession=Session{{{token} 1000:u0a10100}}\n"
            f"    mFrame=[0,0][{width},{height}]\n"
            f"  mCurrentFocus={window}\n"
            f"  mFocusedApp=ActivityRecord{{{token} u0 {package}/{activity} t1}}\n")


def _dumpsys_package(device: SimDevice, package: str) -> str:
    app = _app_of(device.phone, package)
    if app is None:
        return f"Unable to find package: {package}\n"
    lines = ["Activity Resolver Table:", "  Non-Data Actions:", "      android.intent.action.MAIN:"]
    for screen in app.screens:
        lines.append(f"        {_window_token(package, screen)} {package}/.{screen} filter "
                     f"{_window_token(screen, package)}")
        lines.append('          Action: "android.intent.action.MAIN"')
        if screen == app.home:
            lines.append('          Category: "android.intent.category.LAUNCHER"')
    lines += ["", "Packages:", f"  Package [{package}] ({_window_token(package)}):", "    userId=10100",
              f"    pkg=Package{{{_window_token(package)} {package}}}",
              "    versionCode=1 minSdk=30 targetSdk=34", f"    versionName={app_version(app.name)}",
              "    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]", ""]
    return "\n".join(lines) + "\n"


def cmd_dumpsys(device: SimDevice, args: list[str]) -> ShellResult:
    service = args[0] if args else ""
    if service == "window":
        return _out(_dumpsys_window(device))
    if service == "package" and len(args) > 1:
        return _out(_dumpsys_package(device, args[-1]))
    if service == "power":
        awake = device.screen_on
        return _out(f"POWER MANAGER (dumpsys power)\n  mWakefulness={'Awake' if awake else 'Asleep'}\n"
                    f"  mInteractive={'true' if awake else 'false'}\n"
                    f"Display Power: state={'ON' if awake else 'OFF'}\n")
    if service == "display":
        width, height = device.phone.size
        return _out(f"DISPLAY MANAGER (dumpsys display)\n  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, "
                    f"isActive=true, displayId=0, uniqueId='local:0', orientation=0, logicalFrame=Rect(0, 0 - "
                    f"{width}, {height}), deviceWidth={width}, deviceHeight={height}}}]\n")
    if service == "activity" and args[1:2] in ([], ["activities"], ["a"]):
        package, activity = _focus(device.phone)
        return _out(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n  mResumedActivity: "
                    f"ActivityRecord{{{_window_token(package, activity)} u0 {package}/{activity} t1}}\n")
    return _out(f"Can't find service: {service}\n" if service else "")


def cmd_wm(device: SimDevice, args: list[str]) -> ShellResult:
    width, height = device.phone.size
    if args[:1] == ["size"]:
        return _out(f"Physical size: {width}x{height}\n")
    if args[:1] == ["density"]:
        return _out(f"Physical density: {round(160 * width / CANVAS_DP_WIDTH)}\n")
    return ShellResult.error("usage: wm [size|density]", 255)


def cmd_getprop(device: SimDevice, args: list[str]) -> ShellResult:
    props = {**PROPERTIES, "ro.serialno": device.serial, "sys.boot_completed": "1" if device.booted else ""}
    if args:
        return _out(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")
    return _out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


# --- screen capture -----------------------------------------------------------------------------------

def _raw_screencap(png: bytes) -> bytes:
    """screencap's raw format: width, height, format (1 = RGBA_8888), colour space, pixels."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    header = b"".join(v.to_bytes(4, "little") for v in (image.width, image.height, 1, 0))
    return header + image.tobytes()


def cmd_screencap(device: SimDevice, args: list[str]) -> ShellResult:
    png = device.phone.observe().png
    data = png if "-p" in args else _raw_screencap(png)
    files = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] != "-d")]
    if files:
        path = files[-1]
        if path.endswith(".png"):
            data = png
        device.write_file(path, data)
        return ShellResult()
    return ShellResult(data)


def cmd_uiautomator(device: SimDevice, args: list[str]) -> ShellResult:
    if not args or args[0] != "dump":
        return ShellResult.error("Usage: uiautomator <subcommand> [options]\n    dump [--compressed] [file]")
    paths = [a for a in args[1:] if not a.startswith("--")]
    path = paths[0] if paths else DEFAULT_DUMP_PATH
    if device.dump_faults:
        return ShellResult.error(device.dump_faults.pop(0))
    if device.stale_dumps and device.last_dump is not None:
        device.stale_dumps -= 1
        xml = device.last_dump
    else:
        xml = hierarchy_xml(device.phone.observe().a11y)
        device.last_dump = xml
    message = f"UI hierchary dumped to: {path}\n"  # sic: the device prints this spelling
    if path in ("/dev/tty", "/dev/stdout"):
        return _out(xml + message)
    if not device.is_dir(str(Path(normalize_path(path)).parent)):
        return ShellResult.error(f"ERROR: could not write {path}: No such file or directory")
    device.write_file(path, xml.encode("utf-8"))
    return _out(message)


COMMANDS: dict[str, Command] = {
    "input": cmd_input, "am": cmd_am, "monkey": cmd_monkey, "pm": cmd_pm, "dumpsys": cmd_dumpsys,
    "wm": cmd_wm, "getprop": cmd_getprop, "screencap": cmd_screencap, "uiautomator": cmd_uiautomator,
}
