"""The package manager of a served device: `pm list packages [-3|-s] [-f] [-i] [FILTER]`,
`pm path`, `pm clear`, and `dumpsys package <pkg>` with the fields clients parse (activities,
versionCode/versionName, codePath, firstInstallTime/lastUpdateTime, signatures, pkgFlags).

The simulator's apps are installed as user apps under `/data/app` (as the apps of a user's own
loop are); the launcher, system UI and framework are system packages. Installing and
uninstalling are refused with the package manager's own failure codes: a served device runs its
built-in apps only.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import time
from functools import lru_cache
from pathlib import Path

from phonesim.adb.invocation import Call, Command, ShellResult
from phonesim.app import App
from phonesim.phone import Phone
from phonesim.system import LAUNCHER

ADB_KEYBOARD = "com.android.adbkeyboard"  # the IME whose broadcasts type any Unicode text
SYSTEM_APKS = {"android": "/system/framework/framework-res.apk",
               "com.android.launcher": "/system/priv-app/Launcher3/Launcher3.apk",
               "com.android.systemui": "/system/system_ext/priv-app/SystemUI/SystemUI.apk"}
FIRST_USER_APP_UID = 10100
VERSION_CODE = 1


def app_of(phone: Phone, package: str) -> App | None:
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


def _token(*parts: str) -> str:
    """A stable stand-in for the random base64 names Android gives install directories."""
    return base64.urlsafe_b64encode(hashlib.sha256("/".join(parts).encode()).digest()[:16]).decode()


def user_packages(phone: Phone) -> list[str]:
    return sorted([a.package for a in phone.apps.values()] + [ADB_KEYBOARD])


def code_path(package: str) -> str:
    return f"/data/app/~~{_token('install', package)}/{package}-{_token('apk', package)}"


def apk_path(package: str) -> str:
    return SYSTEM_APKS.get(package) or f"{code_path(package)}/base.apk"


def force_stop(phone: Phone, app: App) -> None:
    os_ = phone.state["os"]
    os_["tasks"].pop(app.name, None)
    if app.name in os_["recents"]:
        os_["recents"].remove(app.name)
    if os_["foreground"] == app.name:
        os_["foreground"] = LAUNCHER
    phone.invalidate()


def _out(text: str, code: int = 0) -> ShellResult:
    return ShellResult(text.encode("utf-8"), b"", code)


def _list_packages(call: Call, options: list[str]) -> ShellResult:
    flags = {o for o in options if o.startswith("-")}
    filters = [o for i, o in enumerate(options) if not o.startswith("-") and (i == 0 or options[i - 1] != "--user")]
    users = user_packages(call.device.phone)
    chosen = users if "-3" in flags else sorted(SYSTEM_APKS) if "-s" in flags else sorted(users + list(SYSTEM_APKS))
    lines = []
    for package in chosen:
        if filters and filters[0] not in package:
            continue
        line = f"package:{apk_path(package)}={package}" if "-f" in flags else f"package:{package}"
        lines.append(line + ("  installer=null" if "-i" in flags else "") + "\n")
    return _out("".join(lines))


def cmd_pm(call: Call) -> ShellResult:
    phone = call.device.phone
    sub, rest = (call.args[0], call.args[1:]) if call.args else ("", [])
    if sub == "list" and rest[:1] == ["packages"]:
        return _list_packages(call, rest[1:])
    if sub == "path" and rest:
        package = rest[-1]
        if package not in user_packages(phone) and package not in SYSTEM_APKS:
            return ShellResult(code=1)
        return _out(f"package:{apk_path(package)}\n")
    if sub == "clear" and rest:
        app = app_of(phone, rest[-1])
        if app is None:
            return _out("Failed\n", 1)
        force_stop(phone, app)
        phone.state["data"][app.name] = Phone(phone.world_seed, phone.size).state["data"][app.name]
        phone.invalidate()
        return _out("Success\n")
    if sub in ("install", "install-create", "install-write", "install-commit"):
        return _out("Failure [INSTALL_FAILED_USER_RESTRICTED: phonesim serves its built-in apps only]\n", 1)
    if sub == "uninstall" and rest:
        return _out("Failure [DELETE_FAILED_USER_RESTRICTED]\n", 1)
    if sub in ("grant", "revoke") and len(rest) >= 2:
        return ShellResult.error(f"Exception occurred while executing '{sub}':\njava.lang.SecurityException: Package "
                                 f"{rest[-2]} has not requested permission {rest[-1]}", 255)
    if not sub:
        return ShellResult.error("usage: pm [list|path|clear|install|uninstall] ...", 1)
    return ShellResult.error(f"Unknown command: {sub}", 255)


def cmd_cmd(call: Call) -> ShellResult:
    """`cmd package …`, the binder form of `pm` that newer clients use."""
    if call.args[:1] == ["package"]:
        return cmd_pm(Call("pm", call.args[1:], call.device, call.session, call.stdin))
    service = call.args[0] if call.args else ""
    return ShellResult.error(f"cmd: Can't find service: {service}" if service else "cmd: No service specified", 20)


def window_token(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:7]


def dumpsys_package(phone: Phone, package: str, installed_at: int) -> str:
    app = app_of(phone, package)
    if app is None:
        return f"Unable to find package: {package}\n"
    lines = ["Activity Resolver Table:", "  Non-Data Actions:", "      android.intent.action.MAIN:"]
    for screen in app.screens:
        lines.append(f"        {window_token(package, screen)} {package}/.{screen} filter "
                     f"{window_token(screen, package)}")
        lines.append('          Action: "android.intent.action.MAIN"')
        if screen == app.home:
            lines.append('          Category: "android.intent.category.LAUNCHER"')
    index = sorted(a.package for a in phone.apps.values()).index(package)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(installed_at))
    flags = "[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]"
    lines += ["", "Packages:", f"  Package [{package}] ({window_token(package)}):",
              f"    userId={FIRST_USER_APP_UID + index}", f"    pkg=Package{{{window_token(package)} {package}}}",
              f"    codePath={code_path(package)}", f"    resourcePath={code_path(package)}",
              "    primaryCpuAbi=null", f"    versionCode={VERSION_CODE} minSdk=30 targetSdk=34",
              f"    versionName={app_version(app.name)}", "    splits=[base]", "    apkSigningVersion=3",
              f"    flags={flags}", f"    timeStamp={stamp}", f"    firstInstallTime={stamp}",
              f"    lastUpdateTime={stamp}", "    installerPackageName=null",
              f"    signatures=PackageSignatures{{{window_token('signatures', package)} version:3, "
              f"signatures:[{window_token('certificate')}], past signatures:[]}}",
              "    installPermissionsFixed=true", f"    pkgFlags={flags}",
              "    User 0: ceDataInode=0 installed=true hidden=false suspended=false distractionFlags=0 "
              "stopped=false notLaunched=false enabled=0 instant=false virtual=false", ""]
    return "\n".join(lines) + "\n"


COMMANDS: dict[str, Command] = {"pm": cmd_pm, "cmd": cmd_cmd}
