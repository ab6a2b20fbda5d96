"""The device shell as adb client code uses it — mksh quoting and metacharacters, lists and exit
statuses, builtins and toybox tools, files shared with `sync:` — through adbutils (shell v1 with
its `; echo X4EXIT:$?` suffix, and shell v2) and the adb binary."""

import re
import stat

import pytest

from tests.support.adb_server import adb, needs_adb_binary

# (command line, stdout, exit status): what a device's /system/bin/sh answers
ANSWERS = [
    ("echo -n '&'", "&", 0),
    ("echo 'a;b' \"c|d\" e\\&f '>x'", "a;b c|d e&f >x\n", 0),
    ("echo a; echo b", "a\nb\n", 0),
    ("echo a && false || echo recovered", "a\nrecovered\n", 0),
    ("false; echo $?", "1\n", 0),
    ("frobnicate 2>/dev/null; echo $?", "127\n", 0),
    ("echo '$?' \"$?\"", "$? 0\n", 0),
    ("exit 3", "", 3),
    ("pwd", "/\n", 0),
    ("cd /sdcard && pwd && cd .. && pwd", "/sdcard\n/\n", 0),
    ("cd /nowhere", "", 2),
    ("which ls getprop", "/system/bin/ls\n/system/bin/getprop\n", 0),
    ("which frobnicate", "", 1),
    ("command -v input", "/system/bin/input\n", 0),
    ("getprop ro.build.version.sdk", "34\n", 0),
    ("getprop sys.boot_completed", "1\n", 0),
    ("settings get global window_animation_scale", "1.0\n", 0),
    ("settings put global window_animation_scale 0; settings get global window_animation_scale", "0\n", 0),
    ("settings get secure no_such_key", "null\n", 0),
    ("id -u", "2000\n", 0),
    ("echo one | grep -c one", "1\n", 0),
    ("echo 'f(x)' | grep '('", "f(x)\n", 0),  # a BRE parenthesis is a literal
    ("echo x > /sdcard/a.txt; cat /sdcard/a.txt /storage/emulated/0/a.txt", "x\nx\n", 0),
    ("[ -d /sdcard ] && test -e /system/bin/sh && echo both", "both\n", 0),
    ("sh -c 'echo inner; exit 4'; echo $?", "inner\n4\n", 0),
    ("V=1; echo $V ${V}", "1 1\n", 0),
    ("ls /nowhere 2>&1 | grep -c nowhere", "1\n", 0),
    ("ls /nowhere > /data/local/tmp/e 2>&1; cat /data/local/tmp/e", "ls: /nowhere: No such file or directory\n", 0),
    ("ls /nowhere 2>&1 > /data/local/tmp/e", "ls: /nowhere: No such file or directory\n", 1),  # order matters
    ("echo to-stderr >&2", "", 0),
    ("exec echo replaced; echo never", "replaced\n", 0),
    ("echo -e 'a\\tb'", "a\tb\n", 0),
]


@pytest.mark.parametrize("line,stdout,status", ANSWERS)
def test_command_lines_answer_as_a_device_shell(client, line, stdout, status):
    result = client.device("phonesim-1").shell2(line, v2=True, timeout=10)
    assert (result.stdout, result.returncode) == (stdout, status), result.stderr


def test_errors_read_as_mksh_and_toybox_print_them(client):
    device = client.device("phonesim-1")
    for line, stderr in [
        ("frobnicate", "/system/bin/sh: frobnicate: inaccessible or not found"),
        ("cd /nowhere", "/system/bin/sh: cd: /nowhere: No such file or directory"),
        ("ls /nowhere", "ls: /nowhere: No such file or directory"),
        ("touch /system/x", "touch: '/system/x': Read-only file system"),
        ("echo x > /system/x", "/system/bin/sh: can't create /system/x: Read-only file system"),
        ("mkdir /sdcard", "mkdir: '/sdcard': File exists"),
        ("echo 'open", "/system/bin/sh: no closing quote"),
        ("echo a;;", "/system/bin/sh: syntax error: ';' unexpected"),
    ]:
        result = device.shell2(line, v2=True, timeout=10)
        assert result.returncode != 0 and result.stderr.strip() == stderr, line


def test_shell_v1_exit_status_and_output_order(client):
    """adbutils' shell v1 appends `; echo X4EXIT:$?`; output keeps the order it was written in."""
    device = client.device("phonesim-2")
    result = device.shell2("echo first; ls /nowhere; echo last; false")
    assert result.returncode == 1
    assert result.output == "first\nls: /nowhere: No such file or directory\nlast\n"
    assert device.shell(["echo", "-n", "a b", "&", "$HOME"]) == "a b & $HOME"  # list2cmdline quoting


def test_files_the_shell_makes_are_the_files_sync_sees(client):
    device = client.device("phonesim-1")
    assert not device.sync.exists("/sdcard/made/by/shell.txt")
    device.shell("mkdir -p /sdcard/made/by && touch /sdcard/made/by/shell.txt", timeout=10)
    assert device.sync.exists("/sdcard/made/by/shell.txt")
    assert {f.path for f in device.sync.list("/sdcard/made")} >= {".", "..", "by"}
    entry = next(f for f in device.sync.list("/sdcard/made") if f.path == "by")
    assert stat.S_ISDIR(entry.mode)
    device.sync.push(b"pushed\n", "/data/local/tmp/pushed.txt")
    assert device.shell("cat /data/local/tmp/pushed.txt; stat -c '%s %F' /data/local/tmp/pushed.txt") == \
        "pushed\n7 regular file"
    device.shell("rm -r /sdcard/made", timeout=10)
    assert not device.sync.exists("/sdcard/made/by/shell.txt") and not device.sync.exists("/sdcard/made")


def test_ls_l_and_stat_print_toybox_columns(client):
    device = client.device("phonesim-1")
    device.shell("mkdir /data/local/tmp/d && echo hello > /data/local/tmp/d/f", timeout=10)
    lines = device.shell("ls -l /data/local/tmp/d").splitlines()
    assert lines[0].startswith("total ")
    assert re.fullmatch(r"-rw-rw---- 1 shell shell 6 \d{4}-\d\d-\d\d \d\d:\d\d f", lines[1]), lines[1]
    full = device.shell("stat /data/local/tmp/d/f")
    assert full.startswith("  File: /data/local/tmp/d/f\n  Size: 6\t") and "regular file" in full
    assert "Access: (0660/-rw-rw----)" in full
    assert device.shell("stat -c '%a %U %G %n' /data/local/tmp/d") == "771 shell shell /data/local/tmp/d"
    assert device.shell("ls /sdcard/ /data/local/tmp/d") == "/data/local/tmp/d:\nf\n\n/sdcard/:"


def test_globs_expand_on_device_files_unless_quoted(client):
    device = client.device("phonesim-2")
    device.shell("cd /sdcard && touch one.png two.png keep.txt", timeout=10)
    assert device.shell("ls /sdcard/*.png") == "/sdcard/one.png\n/sdcard/two.png"
    assert device.shell("echo '/sdcard/*.png'") == "/sdcard/*.png"
    device.shell("rm /sdcard/*.png", timeout=10)
    assert device.shell("ls /sdcard") == "keep.txt"


@needs_adb_binary
def test_the_adb_binary_runs_quoted_lines_and_keeps_statuses(server):
    result = adb(server.port, "-s", "phonesim-1", "shell", "echo -n '&'; echo ' '$?; pwd; exit 7")
    assert (result.returncode, result.stdout) == (7, "& 0\n/\n")
    listing = adb(server.port, "-s", "phonesim-1", "shell", "touch /sdcard/x && ls -l /sdcard/ && which stat")
    assert listing.returncode == 0 and " x\n" in listing.stdout and listing.stdout.endswith("/system/bin/stat\n")
    assert adb(server.port, "-s", "phonesim-1", "shell", "getprop", "ro.product.model").stdout == "phonesim\n"
