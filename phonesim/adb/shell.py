"""A small `/system/bin/sh -c`: command lists joined by `;`, `&&`, `||`, pipelines with `|`,
`$?`, and the few builtins/toybox tools that adb clients chain around device commands
(`rm -f F; uiautomator dump F && echo success`, `…; echo X4EXIT:$?`, `dumpsys window | grep
mCurrentFocus`). Anything else goes to `phonesim.adb.commands`; unknown names answer as a
device shell does (`/system/bin/sh: X: not found`, status 127).

Limits: no redirections, subshells or variables other than `$?`; a quoted lone `;`, `|`,
`&&` or `||` is read as an operator.
"""

from __future__ import annotations

import re
import shlex
import time

from phonesim.adb.commands import COMMANDS
from phonesim.adb.device import ShellResult, SimDevice, normalize_path

OPERATORS = (";", "&&", "||", "&")
MAX_SLEEP_S = 30.0


def split_line(line: str) -> list[tuple[str, list[list[str]]]]:
    """[(operator before it, pipeline)]: each pipeline is a list of argument vectors."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    out: list[tuple[str, list[list[str]]]] = []
    op, pipeline, argv = ";", [], []
    for token in lexer:
        if token in OPERATORS:
            if argv:
                pipeline.append(argv)
            if pipeline:
                out.append((op, pipeline))
            op, pipeline, argv = (";" if token == "&" else token), [], []
        elif token == "|":
            pipeline.append(argv)
            argv = []
        else:
            argv.append(token)
    if argv:
        pipeline.append(argv)
    if pipeline:
        out.append((op, pipeline))
    return out


def run_line(device: SimDevice, line: str) -> ShellResult:
    """Run a command line; stdout and stderr of every command, the last status."""
    try:
        lists = split_line(line)
    except ValueError as exc:  # unbalanced quotes
        return ShellResult.error(f"/system/bin/sh: syntax error: {exc}", 2)
    stdout, stderr, status = b"", b"", 0
    for op, pipeline in lists:
        if (op == "&&" and status != 0) or (op == "||" and status == 0):
            continue
        data = b""
        for argv in pipeline:
            argv = [a.replace("$?", str(status)) for a in argv]
            result = run_command(device, argv, data)
            data, status = result.stdout, result.code
            stderr += result.stderr
        stdout += data
    return ShellResult(stdout, stderr, status)


def run_command(device: SimDevice, argv: list[str], stdin: bytes) -> ShellResult:
    if not argv:
        return ShellResult()
    name, args = argv[0], argv[1:]
    if name in BUILTINS:
        return BUILTINS[name](device, args, stdin)
    command = COMMANDS.get(name)
    if command is None:
        return ShellResult.error(f"/system/bin/sh: {name}: not found", 127)
    with device.lock:
        return command(device, args)


def _echo(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    newline = not (args and args[0] == "-n")
    text = " ".join(args[1:] if not newline else args)
    return ShellResult((text + ("\n" if newline else "")).encode())


def _rm(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    force = any(a.startswith("-") and "f" in a for a in args)
    errors, status = [], 0
    with device.lock:
        for path in (a for a in args if not a.startswith("-")):
            if device.files.pop(normalize_path(path), None) is None and not force:
                errors.append(f"rm: {path}: No such file or directory")
                status = 1
    return ShellResult(b"", "".join(e + "\n" for e in errors).encode(), status)


def _cat(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    if not args:
        return ShellResult(stdin)
    out, errors = b"", []
    for path in args:
        stored = device.files.get(normalize_path(path))
        if stored is None:
            errors.append(f"cat: {path}: No such file or directory")
        else:
            out += stored.data
    return ShellResult(out, "".join(e + "\n" for e in errors).encode(), 1 if errors else 0)


def _ls(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    paths = [a for a in args if not a.startswith("-")] or ["/"]
    out = []
    for path in paths:
        if normalize_path(path) in device.files:
            out.append(path)
        elif device.is_dir(path):
            out.extend(sorted(device.listing(path)))
        else:
            return ShellResult.error(f"ls: {path}: No such file or directory")
    return ShellResult("".join(o + "\n" for o in out).encode())


def _grep(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    flags = {a for a in args if a.startswith("-")}
    patterns = [a for a in args if not a.startswith("-")]
    if not patterns:
        return ShellResult.error("usage: grep [-EFiv] PATTERN", 2)
    pattern = re.escape(patterns[0]) if "-F" in flags else patterns[0]
    regex = re.compile(pattern, re.IGNORECASE if "-i" in flags else 0)
    lines = [ln for ln in stdin.decode("utf-8", "replace").splitlines()
             if bool(regex.search(ln)) != ("-v" in flags)]
    return ShellResult("".join(ln + "\n" for ln in lines).encode(), b"", 0 if lines else 1)


def _sleep(device: SimDevice, args: list[str], stdin: bytes) -> ShellResult:
    try:
        seconds = float(args[0])
    except (IndexError, ValueError):
        return ShellResult.error("sleep: need a number of seconds")
    time.sleep(min(seconds, MAX_SLEEP_S))
    return ShellResult()


BUILTINS = {
    "echo": _echo, "rm": _rm, "cat": _cat, "ls": _ls, "grep": _grep, "sleep": _sleep,
    "true": lambda d, a, s: ShellResult(), "false": lambda d, a, s: ShellResult(code=1),
}
