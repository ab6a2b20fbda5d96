"""`sync:` for directories both ways, with the protocol's details clients rely on: LIST entries
with `.`/`..`, mode bits and mtimes, STAT (adbutils) and STA2/LIS2 (the adb binary), parents
made on push, pushing into an existing directory — still confined to the writable trees."""

import os
import stat
import struct

import pytest
from adbutils.errors import AdbError

from tests.support.adb_server import Raw, adb, needs_adb_binary


def _tree(root):
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"alpha\n")
    (root / "sub" / "b.bin").write_bytes(bytes(range(256)) * 300)  # more than one 64 KiB DATA chunk
    (root / "sub" / "deeper" / "c.txt").write_bytes(b"")
    os.utime(root / "a.txt", (1_700_000_000, 1_700_000_000))
    return root


def _contents(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@needs_adb_binary
def test_adb_pushes_a_tree_into_an_existing_directory_and_pulls_it_back(server, tmp_path):
    local = _tree(tmp_path / "tree")
    pushed = adb(server.port, "-s", "phonesim-1", "push", str(local), "/sdcard/")
    assert pushed.returncode == 0 and "3 files pushed" in pushed.stderr, pushed.stderr
    assert adb(server.port, "-s", "phonesim-1", "shell", "ls /sdcard/tree/sub").stdout == "b.bin\ndeeper\n"
    fresh = adb(server.port, "-s", "phonesim-1", "push", str(local), "/data/local/tmp/copy")  # a new name
    assert fresh.returncode == 0, fresh.stderr
    pulled = adb(server.port, "-s", "phonesim-1", "pull", "-a", "/data/local/tmp/copy", str(tmp_path / "back"))
    assert pulled.returncode == 0, pulled.stderr
    assert _contents(tmp_path / "back") == _contents(local)
    assert int((tmp_path / "back" / "a.txt").stat().st_mtime) == 1_700_000_000  # push kept it, pull -a restored it
    missing = adb(server.port, "-s", "phonesim-1", "pull", "/sdcard/absent", str(tmp_path / "x"))
    assert missing.returncode != 0 and "No such file or directory" in missing.stderr


def test_adbutils_push_into_a_directory_and_pull_a_tree(client, tmp_path):
    device = client.device("phonesim-2")
    source = tmp_path / "notes.txt"
    source.write_text("remember\n")
    device.sync.push(str(source), "/data/local/tmp")  # an existing directory: the file goes inside
    assert device.shell("cat /data/local/tmp/notes.txt") == "remember"
    device.shell("mkdir -p /sdcard/t/s && echo 1 > /sdcard/t/one && echo 2 > /sdcard/t/s/two", timeout=10)
    assert device.sync.pull("/sdcard/t/", tmp_path / "t") == 4
    assert _contents(tmp_path / "t") == {"one": b"1\n", "s/two": b"2\n"}


def test_list_entries_carry_mode_bits_sizes_and_mtimes(client):
    device = client.device("phonesim-1")
    device.sync.push(b"12345", "/sdcard/f.bin", mode=0o640)
    device.shell("mkdir /sdcard/dir", timeout=10)
    entries = {e.path: e for e in device.sync.list("/sdcard")}
    assert {".", "..", "f.bin", "dir"} <= set(entries)
    pushed, made = entries["f.bin"], entries["dir"]
    assert stat.S_ISREG(pushed.mode) and stat.S_IMODE(pushed.mode) == 0o666 and pushed.size == 5  # adbd: u -> g -> o
    assert stat.S_ISDIR(made.mode) and made.mtime.year >= 2024
    info = device.sync.stat("/sdcard/f.bin")
    assert (info.size, stat.S_ISREG(info.mode)) == (5, True)
    assert device.sync.stat("/sdcard/absent").mode == 0  # STAT of a missing path: all zeros
    assert stat.S_ISLNK(device.sync.stat("/sdcard").mode) and stat.S_ISDIR(device.sync.stat("/sdcard/").mode)


def test_stat_v2_and_list_v2_answer_like_adbd(server):
    raw = Raw(server.port)
    raw.request("host:transport:phonesim-1")
    assert raw.status() == (b"OKAY", "")
    raw.request("sync:")
    assert raw.status() == (b"OKAY", "")
    raw.sync(b"STA2", 9, b"/nowhere/")
    reply = raw.read(72)
    assert reply[:4] == b"STA2" and struct.unpack("<I", reply[4:8])[0] == 2  # ENOENT
    raw.sync(b"LIS2", 15, b"/data/local/tmp")
    names = []
    while (head := raw.read(4)) == b"DNT2":
        fields = raw.read(72)
        names.append(raw.read(struct.unpack("<I", fields[68:72])[0]).decode())
    assert head == b"DONE" and names == [".", ".."]
    raw.read(72)  # the rest of the DONE entry
    raw.sync(b"QUIT", 0)
    raw.close()


def test_pushes_outside_the_writable_trees_fail_with_adbds_message(client):
    device = client.device("phonesim-1")
    for target in ("/system/bin/evil", "/data/system/x", "/sdcard"):
        with pytest.raises(AdbError):
            device.sync.push(b"x", target)
    assert device.shell("ls /system/bin/evil; echo $?").endswith("1")
