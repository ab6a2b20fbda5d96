"""The Android commands a served phonesim device answers: `input`, `am`, `monkey`, `dumpsys`,
`wm`, `getprop`, `settings`, and (from `phonesim.adb.screen` and `.packages`) `screencap`,
`uiautomator`, `pm`, `cmd`. Output follows what a device prints (Android 14, as far as clients
parse it). Pixel coordinates become phonesim actions on its 0–1000 grid; apps are found by
package, screens are their activities (`pkg/.screen`).
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from phonesim.actions import GRID
from phonesim.adb.invocation import Call, Command, ShellResult
from phonesim.adb.keycodes import SCREEN_KEYS, key_action, parse_keycode
from phonesim.adb.packages import app_of, app_version, dumpsys_package, force_stop, window_token
from phonesim.adb.screen import cmd_screencap, cmd_uiautomator
from phonesim.phone import Phone

__all__ = ["COMMANDS", "app_version"]  # app_version: resources read the served apps' versions here

LONG_PRESS_MS = 500  # a swipe that stays put this long is a long press (ViewConfiguration)
TOUCH_SLOP_DP = 8  # movement below this is not a swipe (ViewConfiguration.getScaledTouchSlop)
CANVAS_DP_WIDTH = 360  # phonesim screens are laid out 360 dp wide
INPUT_SOURCES = frozenset({"touchscreen", "touchpad", "keyboard", "mouse", "stylus", "dpad", "gamepad",
                           "trackball", "joystick", "touchnavigation", "rotaryencoder"})

PROPERTIES = {
    "ro.product.model": "phonesim", "ro.product.name": "phonesim", "ro.product.device": "phonesim",
    "ro.product.board": "phonesim", "ro.hardware": "phonesim", "ro.product.brand": "MobileForge",
    "ro.product.manufacturer": "MobileForge", "ro.product.cpu.abi": "x86_64",
    "ro.product.cpu.abilist": "x86_64,arm64-v8a", "ro.build.version.release": "14", "ro.build.version.sdk": "34",
    "ro.build.version.security_patch": "2024-01-05", "ro.build.id": "PSIM.240105",
    "ro.build.display.id": "phonesim-userdebug 14 PSIM.240105", "ro.build.type": "userdebug",
    "ro.build.tags": "test-keys",
    "ro.build.fingerprint": "MobileForge/phonesim/phonesim:14/PSIM.240105/1:userdebug/test-keys",
    "ro.build.characteristics": "default", "ro.kernel.qemu": "0", "ro.debuggable": "1", "ro.secure": "1",
    "ro.adb.secure": "1", "service.adb.root": "0", "persist.sys.locale": "en-US", "ro.product.locale": "en-US",
    "persist.sys.timezone": "UTC", "init.svc.bootanim": "stopped",
}
SETTINGS_USAGE = "usage:  settings [--user <USER_ID> | current] get|put|delete|list namespace [key [value]]"


def _out(text: str, code: int = 0) -> ShellResult:
    return ShellResult(text.encode("utf-8"), b"", code)


# --- input -----------------------------------------------------------------------------------

def _grid(phone: Phone, x: str, y: str) -> list[float]:
    width, height = phone.size
    px, py = float(x), float(y)
    if math.isnan(px) or math.isnan(py):
        raise ValueError("not a coordinate")
    return [min(max(px * GRID / width, 0.0), GRID), min(max(py * GRID / height, 0.0), GRID)]


def _input_usage(sub: str) -> ShellResult:
    return ShellResult.error(f"Error: Invalid arguments for command: {sub}\nUsage: input [<source>] [-d DISPLAY_ID] "
                             "<command> [<arg>...]\n  tap <x> <y>\n  swipe <x1> <y1> <x2> <y2> [duration(ms)]\n"
                             "  text <string>\n  keyevent [--longpress] <key code number or name> ...")


def _swipe_action(phone: Phone, nums: list[str], drag: bool) -> dict[str, Any]:
    start, end = _grid(phone, nums[0], nums[1]), _grid(phone, nums[2], nums[3])
    x1, y1, x2, y2 = (float(v) for v in nums[:4])
    duration = float(nums[4]) if len(nums) > 4 else 300.0
    slop = TOUCH_SLOP_DP * phone.size[0] / CANVAS_DP_WIDTH
    if abs(x2 - x1) <= slop and abs(y2 - y1) <= slop:
        kind = "long_press" if duration >= LONG_PRESS_MS else "click"
        return {"type": kind, "args": {"point": start}}
    return {"type": "drag" if drag else "swipe", "args": {"point": start, "end_point": end}}


def _keyevents(call: Call, keys: list[str]) -> ShellResult | None:
    codes = [parse_keycode(k) for k in keys if k not in ("--longpress", "--doubletap")]
    if None in codes or not codes:
        return _input_usage("keyevent")
    for code in codes:
        if code in SCREEN_KEYS:  # POWER toggles, SLEEP/WAKEUP set the display (`dumpsys power`)
            call.device.screen_on = (not call.device.screen_on) if SCREEN_KEYS[code] is None else SCREEN_KEYS[code]
        elif (action := key_action(code)) is not None:
            call.device.phone.step(action)
    return None


def cmd_input(call: Call) -> ShellResult:
    args = call.args
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        return _input_usage("")
    sub, rest, phone = args[0], args[1:], call.device.phone
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
            return _keyevents(call, rest) or ShellResult()
        else:
            return _input_usage(sub)
    except ValueError:
        return _input_usage(sub)
    return ShellResult()


# --- activities -------------------------------------------------------------------------------------

def _start_activity(phone: Phone, component: str) -> ShellResult:
    package, _, activity = component.partition("/")
    app = app_of(phone, package)
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


def _option(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def _broadcast(call: Call, args: list[str]) -> ShellResult:
    action = _option(args, "-a") or ""
    extras = {args[i + 1]: args[i + 2] for i in range(len(args) - 2) if args[i] == "--es"}
    head = f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
    if action in ("ADB_INPUT_TEXT", "ADB_INPUT_B64") and "msg" in extras:
        try:
            text = (base64.b64decode(extras["msg"], validate=True).decode("utf-8") if action == "ADB_INPUT_B64"
                    else extras["msg"])
        except (binascii.Error, UnicodeDecodeError):
            return _out(head + "Broadcast completed: result=0\n")
        call.device.phone.step({"type": "type", "args": {"text": text}})
    return _out(head + "Broadcast completed: result=0\n")


def cmd_am(call: Call) -> ShellResult:
    phone, args = call.device.phone, call.args
    if not args:
        return ShellResult.error("usage: am [start|force-stop|broadcast] ...")
    sub, rest = args[0], args[1:]
    if sub in ("start", "start-activity"):
        component = _option(rest, "-n")
        if component is None:
            intent = " ".join(f"{k}={v}" for k, v in (("act", _option(rest, "-a")), ("dat", _option(rest, "-d"))) if v)
            return ShellResult(b"", f"Error: Activity not started, unable to resolve Intent {{ {intent} "
                                    "flg=0x10000000 }\n".encode(), 1)
        if "-S" in rest and (app := app_of(phone, component.partition("/")[0])) is not None:
            force_stop(phone, app)
        return _start_activity(phone, component)
    if sub == "force-stop" and rest:
        app = app_of(phone, rest[-1])
        if app is not None:
            force_stop(phone, app)
        return ShellResult()
    if sub == "broadcast":
        return _broadcast(call, rest)
    return ShellResult.error(f"Unknown command: {sub}", 255)


def cmd_monkey(call: Call) -> ShellResult:
    package = _option(call.args, "-p")
    app = app_of(call.device.phone, package) if package else None
    if app is None:
        return _out("  bash arg: -p\n** No activities found to run, monkey aborted.\n", 251)
    call.device.phone.step({"type": "open_app", "args": {"app": app.name}})
    return _out(f"  bash arg: -p\n  bash arg: {package}\nEvents injected: 1\n"
                "## Network stats: elapsed time=4ms (0ms mobile, 0ms wifi, 4ms not connected)\n")


# --- dumpsys, wm, getprop, settings ------------------------------------------------------------------

def _focus(phone: Phone) -> tuple[str, str]:
    frame = phone.frame()
    return frame.package, f"{frame.package}.{frame.screen}"


def _dumpsys_window(phone: Phone) -> str:
    package, activity = _focus(phone)
    token = window_token(package, activity)
    width, height = phone.size
    window = f"Window{{{token} u0 {package}/{activity}}}"
    return (f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 {window}:\n"
            f"    mDisplayId=0 rootTaskId=1 mSession=Session{{{token} 1000:u0a10100}}\n"
            f"    mFrame=[0,0][{width},{height}]\n"
            f"  mCurrentFocus={window}\n"
            f"  mFocusedApp=ActivityRecord{{{token} u0 {package}/{activity} t1}}\n")


def cmd_dumpsys(call: Call) -> ShellResult:
    device, args = call.device, call.args
    service = args[0] if args else ""
    if service == "window":
        return _out(_dumpsys_window(device.phone))
    if service == "package" and len(args) > 1:
        return _out(dumpsys_package(device.phone, args[-1], device.installed_at))
    if service == "power":
        awake = device.screen_on
        return _out(f"POWER MANAGER (dumpsys power)\n  mWakefulness={'Awake' if awake else 'Asleep'}\n"
                    f"  mInteractive={'true' if awake else 'false'}\n"
                    f"  mHoldingDisplaySuspendBlocker={'true' if awake else 'false'}\n"
                    f"Display Power: state={'ON' if awake else 'OFF'}\n")
    if service == "display":
        width, height = device.phone.size
        return _out(f"DISPLAY MANAGER (dumpsys display)\n  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, "
                    f"isActive=true, displayId=0, uniqueId='local:0', orientation=0, logicalFrame=Rect(0, 0 - "
                    f"{width}, {height}), deviceWidth={width}, deviceHeight={height}}}]\n")
    if service == "activity" and args[1:2] in ([], ["activities"], ["a"]):
        package, activity = _focus(device.phone)
        return _out(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n  mResumedActivity: "
                    f"ActivityRecord{{{window_token(package, activity)} u0 {package}/{activity} t1}}\n")
    return _out(f"Can't find service: {service}\n" if service else "")


def cmd_wm(call: Call) -> ShellResult:
    width, height = call.device.phone.size
    if call.args[:1] == ["size"]:
        return _out(f"Physical size: {width}x{height}\n")
    if call.args[:1] == ["density"]:
        return _out(f"Physical density: {_density(width)}\n")
    return ShellResult.error("usage: wm [size|density]", 255)


def _density(width: int) -> int:
    return round(160 * width / CANVAS_DP_WIDTH)


def cmd_getprop(call: Call) -> ShellResult:
    device = call.device
    props = {**PROPERTIES, "ro.serialno": device.serial, "ro.boot.serialno": device.serial,
             "ro.sf.lcd_density": str(_density(device.phone.size[0])),
             "sys.boot_completed": "1" if device.booted else "", "dev.bootcomplete": "1" if device.booted else ""}
    if call.args:
        return _out(props.get(call.args[0], call.args[1] if len(call.args) > 1 else "") + "\n")
    return _out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


def cmd_settings(call: Call) -> ShellResult:
    """The settings provider as a key/value store per namespace; unknown keys read `null`."""
    args = list(call.args)
    if args[:1] == ["--user"]:
        args = args[2:]
    if len(args) < 2 or args[0] not in ("get", "put", "delete", "list") or args[1] not in call.device.settings:
        return ShellResult.error(SETTINGS_USAGE if len(args) < 2 or args[0] not in ("get", "put", "delete", "list")
                                 else f"Invalid namespace '{args[1]}'", 255 if len(args) >= 2 else 1)
    verb, table, rest = args[0], call.device.settings[args[1]], args[2:]
    if verb == "list":
        return _out("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
    if not rest or (verb == "put" and len(rest) < 2):
        return ShellResult.error(SETTINGS_USAGE, 1)
    if verb == "get":
        return _out(f"{table.get(rest[0], 'null')}\n")
    if verb == "put":
        table[rest[0]] = rest[1]
        return ShellResult()
    return _out(f"Deleted {1 if table.pop(rest[0], None) is not None else 0} rows\n")


COMMANDS: dict[str, Command] = {
    "input": cmd_input, "am": cmd_am, "monkey": cmd_monkey, "dumpsys": cmd_dumpsys, "wm": cmd_wm,
    "getprop": cmd_getprop, "settings": cmd_settings, "screencap": cmd_screencap, "uiautomator": cmd_uiautomator,
}
