"""`screencap` in the pixel format a phone produces: the raw frame buffer (width, height, format
RGBA_8888, colour space sRGB, then RGBA pixels) without `-p`, an RGBA PNG with it or to a .png
file, showing the same pixels as the simulator's own screenshot."""

import io
import struct

from PIL import Image

from tests.support.adb_server import SIZE, adb, needs_adb_binary


def _phonesim_rgba(server, serial: str) -> bytes:
    return Image.open(io.BytesIO(server.device(serial).phone.observe().png)).convert("RGBA").tobytes()


def test_raw_screencap_has_the_frame_buffer_header_and_rgba_pixels(client, server):
    raw = client.device("phonesim-1").shell("screencap", encoding=None, timeout=10)
    width, height, pixel_format, colour_space = struct.unpack("<4I", raw[:16])
    assert (width, height, pixel_format, colour_space) == (*SIZE, 1, 1)
    assert len(raw) == 16 + width * height * 4
    assert raw[16:] == _phonesim_rgba(server, "phonesim-1")


def test_png_screencap_is_an_rgba_png_of_the_screen(client, server):
    device = client.device("phonesim-1")
    png = device.shell("screencap -p", encoding=None, timeout=10)
    image = Image.open(io.BytesIO(png))
    assert (image.format, image.mode, image.size) == ("PNG", "RGBA", SIZE)
    assert png[25] == 6  # IHDR colour type 6: RGB + alpha, not a palette
    assert image.tobytes() == _phonesim_rgba(server, "phonesim-1")
    shot = device.screenshot()  # adbutils: screencap -p, RGBA converted to RGB
    assert shot.mode == "RGB" and shot.size == SIZE
    assert shot.tobytes() == Image.open(io.BytesIO(png)).convert("RGB").tobytes()


def test_screencap_to_a_file_picks_the_format_by_name(client):
    device = client.device("phonesim-2")
    device.shell("screencap /sdcard/shot.png; screencap /sdcard/shot.raw; screencap -p /sdcard/shot.bin", timeout=20)
    assert Image.open(io.BytesIO(device.sync.read_bytes("/sdcard/shot.png"))).mode == "RGBA"
    assert device.sync.read_bytes("/sdcard/shot.bin")[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack("<2I", device.sync.read_bytes("/sdcard/shot.raw")[:8]) == SIZE


@needs_adb_binary
def test_the_adb_binary_gets_the_png_by_exec_out_and_by_pull(server, tmp_path):
    streamed = adb(server.port, "-s", "phonesim-1", "exec-out", "screencap", "-p", text=False)
    assert streamed.returncode == 0, streamed.stderr
    assert Image.open(io.BytesIO(streamed.stdout)).tobytes() == _phonesim_rgba(server, "phonesim-1")
    result = adb(server.port, "-s", "phonesim-1", "shell", "screencap -p /data/local/tmp/s.png")
    assert result.returncode == 0, result.stderr
    target = tmp_path / "s.png"
    assert adb(server.port, "-s", "phonesim-1", "pull", "/data/local/tmp/s.png", str(target)).returncode == 0
    assert Image.open(target).convert("RGBA").tobytes() == _phonesim_rgba(server, "phonesim-1")
