"""One observation of an adb device in one shell round trip: the command (`DUMP_COMMAND`) and the reading
of its output — uiautomator's message, the hierarchy XML, the focused window and the screenshot's PNG.

Each adb command is a connection of its own (and adbutils waits 10 ms as it closes one), so `AdbEnvironment`
asks for all of an observation at once: 2.4 shell commands per step instead of 4.88 and a pull with the dump,
the pull, the focus query and the screencap apart (docs/devices.md). Shell protocol v2 carries the PNG's bytes
unchanged.
"""

from __future__ import annotations

import re

DUMP_PATH = "/sdcard/window_dump.xml"
DUMP_FAILURES = ("ERROR", "null root node", "could not get idle state")
DUMP_COMMAND = (f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH} && cat {DUMP_PATH}; "
                "dumpsys window | grep mCurrentFocus; screencap -p")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ (?P<package>[^\s/]+)/(?P<activity>[^\s}]+)\}")


def split_screenshot(stdout: bytes, stderr: bytes) -> tuple[str, bytes]:
    """`DUMP_COMMAND`'s output as its text (stdout before the screenshot, then stderr) and the screenshot's PNG
    (empty when screencap gave none)."""
    start = stdout.find(PNG_SIGNATURE, max(stdout.find(b"</hierarchy>"), 0))  # XML escapes "<" in its values
    if start < 0:
        return (stdout + stderr).decode("utf-8", errors="replace"), b""
    return (stdout[:start] + stderr).decode("utf-8", errors="replace"), stdout[start:]


def split_dump(text: str) -> tuple[str | None, str, str]:
    """The text of `DUMP_COMMAND`'s output as (the hierarchy XML or None, what follows it, what precedes it:
    uiautomator's message); without XML, what precedes the focus query's output stands for the message."""
    end = text.find("</hierarchy>")
    start = text.find("<?xml")
    if start < 0 or start > end:
        start = text.find("<hierarchy")
    if end < 0 or not 0 <= start < end:
        return None, "", text.split("mCurrentFocus", 1)[0]
    end += len("</hierarchy>")
    return text[start:end], text[end:], text[:start]


def focused_window(text: str) -> tuple[str, str]:
    """(package, activity) of the `mCurrentFocus` line in `text`; empty strings when there is none."""
    match = _FOCUS.search(text)
    if match is None:
        return "", ""
    package, activity = match.group("package"), match.group("activity")
    return package, package + activity if activity.startswith(".") else activity
