"""What a served device shows: `screencap` in a phone's pixel format and `uiautomator dump`.

`screencap` as Android's: without `-p` the raw frame buffer — four little-endian u32 (width,
height, pixel format 1 = RGBA_8888, colour space 1 = sRGB) then the RGBA pixels; with `-p`, or to
a `.png` file, an RGBA PNG (8-bit, colour type 6, as Skia encodes the premultiplied RGBA screen
buffer); to a `.jpg` file, a JPEG. The pixels are those of phonesim's own screenshot (its palette
PNG), so an agent sees the same screen through adb as in process; converting costs tens of
milliseconds per new screen at phone resolution, so the last encodings are kept by content.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from PIL import Image

from phonesim.adb.files import FileError
from phonesim.adb.invocation import Call, ShellResult
from phonesim.adb.uiautomator import hierarchy_xml

RGBA_8888, SRGB = 1, 1  # android.graphics.PixelFormat / ADataSpace as screencap writes them
DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
PNG_LEVEL = 1  # zlib level: a valid PNG in a third of the time of level 6, at ~1.5x the bytes
CACHE_SIZE = 16


class _EncodedScreens:
    """The last few screens in each output format, keyed by their pixels (thread-safe)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[bytes, str], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, png: bytes, kind: str) -> bytes:
        key = (hashlib.sha1(png).digest(), kind)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        data = _encode(png, kind)
        with self._lock:
            self._items[key] = data
            while len(self._items) > CACHE_SIZE:
                self._items.popitem(last=False)
        return data


def _encode(png: bytes, kind: str) -> bytes:
    rgba = Image.open(io.BytesIO(png)).convert("RGBA")
    if kind == "raw":
        header = b"".join(v.to_bytes(4, "little") for v in (rgba.width, rgba.height, RGBA_8888, SRGB))
        return header + rgba.tobytes()
    buffer = io.BytesIO()
    if kind == "png":
        rgba.save(buffer, "PNG", compress_level=PNG_LEVEL)
    else:
        rgba.convert("RGB").save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


ENCODED = _EncodedScreens()


def cmd_screencap(call: Call) -> ShellResult:
    args, files = call.args, []
    i = 0
    while i < len(args):
        if args[i] == "-d":
            i += 2
            continue
        if args[i] in ("-h", "--help"):
            return ShellResult.error("usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n"
                                     "   -p: save the file as a png.\n   -d: specify the display ID to capture")
        if not args[i].startswith("-"):
            files.append(args[i])
        elif args[i] != "-p":
            return ShellResult.error(f"screencap: invalid option -- '{args[i].lstrip('-')[:1]}'")
        i += 1
    if len(files) > 1:
        return ShellResult.error("usage: screencap [-hp] [-d display-id] [FILENAME]")
    suffix = PurePosixPath(files[0]).suffix.lower() if files else ""
    kind = "png" if "-p" in args or suffix == ".png" else "jpeg" if suffix in (".jpg", ".jpeg") else "raw"
    data = ENCODED.get(call.device.phone.observe().png, kind)
    if not files:
        return ShellResult(data)
    try:
        call.device.files.write(files[0], data, call.session.cwd)
    except FileError as exc:
        return ShellResult.error(f"Error opening file: {files[0]} ({exc.reason})")
    return ShellResult()


def cmd_uiautomator(call: Call) -> ShellResult:
    device, args = call.device, call.args
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
        return ShellResult((xml + message).encode("utf-8"))
    try:
        device.files.write(path, xml.encode("utf-8"), call.session.cwd)
    except FileError as exc:
        return ShellResult.error(f"ERROR: could not write {path}: {exc.reason}")
    return ShellResult(message.encode("utf-8"))
