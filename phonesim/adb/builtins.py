"""Builtins of the device shell (mksh): `cd`, `pwd`, `echo`, `exit`, `test`/`[`, `command -v`,
`type`, `export`, `unset`, `true`, `false`, `:`. They change the session (working directory,
variables) or answer from it; messages and statuses are mksh's."""

from __future__ import annotations

import stat
from typing import Callable

from phonesim.adb.invocation import Call, ShellResult

SH = "/system/bin/sh"
ALSO_IN_BIN = ("echo", "true", "false", "pwd", "test", "[", "sh")  # builtins that toybox also ships
_ECHO_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                 "\\": "\\"}


class ShellExit(Exception):
    """`exit N`: the rest of the command line is not run."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _cd(call: Call) -> ShellResult:
    if len(call.args) > 1:
        return ShellResult.error(f"{SH}: cd: too many arguments", 2)
    target = call.args[0] if call.args else call.session.env.get("HOME", "/")
    files = call.device.files
    node = files.stat(target, call.session.cwd)
    if node is None or not node.is_dir:
        reason = "No such file or directory" if node is None else "Not a directory"
        return ShellResult.error(f"{SH}: cd: {target}: {reason}", 2)
    # mksh keeps the logical path (`cd /sdcard; pwd` prints /sdcard, not the link's target)
    logical = target if target.startswith("/") else f"{call.session.cwd.rstrip('/')}/{target}"
    parts: list[str] = []
    for part in logical.split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in ("", "."):
            parts.append(part)
    call.session.cwd = "/" + "/".join(parts)
    call.session.env["PWD"] = call.session.cwd
    return ShellResult()


def _pwd(call: Call) -> ShellResult:
    cwd = call.session.cwd
    if "-P" in call.args:
        cwd = call.device.files.canonical(cwd)
    return ShellResult(f"{cwd}\n".encode())


def _echo(call: Call) -> ShellResult:
    args, newline, escapes = list(call.args), True, True  # mksh's echo expands escapes unless -E
    while args and args[0].startswith("-") and len(args[0]) > 1 and set(args[0][1:]) <= set("neE"):
        for flag in args.pop(0)[1:]:
            newline = newline and flag != "n"
            escapes = {"e": True, "E": False}.get(flag, escapes)
    text = " ".join(args)
    if escapes:
        text, stopped = _expand_escapes(text)
        newline = newline and not stopped
    return ShellResult((text + ("\n" if newline else "")).encode("utf-8", "surrogateescape"))


def _expand_escapes(text: str) -> tuple[str, bool]:
    """Backslash escapes as echo -e reads them; True when `\\c` stopped the output."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        code = text[i + 1]
        if code == "c":
            return "".join(out), True
        if code == "0":
            digits = ""
            while len(digits) < 3 and i + 2 + len(digits) < len(text) and text[i + 2 + len(digits)] in "01234567":
                digits += text[i + 2 + len(digits)]
            out.append(chr(int(digits or "0", 8)))
            i += 2 + len(digits)
            continue
        out.append(_ECHO_ESCAPES.get(code, "\\" + code))
        i += 2
    return "".join(out), False


def _exit(call: Call) -> ShellResult:
    raw = call.args[0] if call.args else str(call.session.status)
    try:
        code = int(raw) & 0xFF
    except ValueError:
        raise ShellExit(2) from None
    raise ShellExit(code)


def _test(call: Call) -> ShellResult:
    args = list(call.args)
    if call.name == "[":
        if not args or args[-1] != "]":
            return ShellResult.error(f"{SH}: [: missing ]", 2)
        args = args[:-1]
    try:
        return ShellResult(code=0 if _evaluate(call, args) else 1)
    except ValueError as exc:
        return ShellResult.error(f"{SH}: {call.name}: {exc}", 2)


def _evaluate(call: Call, args: list[str]) -> bool:
    if not args:
        return False
    if args[0] == "!":
        return not _evaluate(call, args[1:])
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        return _unary(call, args[0], args[1])
    if len(args) == 3:
        return _binary(args[0], args[1], args[2])
    raise ValueError(f"{args[3]}: unexpected operator/operand")


def _unary(call: Call, op: str, operand: str) -> bool:
    if op == "-z":
        return operand == ""
    if op == "-n":
        return operand != ""
    node = call.device.files.stat(operand, call.session.cwd, follow=op != "-L")
    checks: dict[str, Callable] = {
        "-e": lambda n: True, "-f": lambda n: stat.S_ISREG(n.mode), "-d": lambda n: n.is_dir,
        "-s": lambda n: n.size > 0, "-r": lambda n: n.listable or not n.is_dir,
        "-w": lambda n: True, "-x": lambda n: bool(n.mode & 0o111), "-L": lambda n: n.is_link,
        "-h": lambda n: n.is_link, "-c": lambda n: stat.S_ISCHR(n.mode),
    }
    if op not in checks:
        raise ValueError(f"{op}: unexpected operator")
    return node is not None and checks[op](node)


def _binary(left: str, op: str, right: str) -> bool:
    if op in ("=", "=="):
        return left == right
    if op == "!=":
        return left != right
    numeric = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
               "-gt": int.__gt__, "-ge": int.__ge__}
    if op not in numeric:
        raise ValueError(f"{op}: unexpected operator")
    try:
        return numeric[op](int(left), int(right))
    except ValueError:
        raise ValueError(f"{left if not left.lstrip('-').isdigit() else right}: bad number") from None


def _command(call: Call) -> ShellResult:
    """`command -v NAME` / `type NAME`: how the shell would run NAME (clients probe tools so)."""
    verbose = call.name == "type"
    names = [a for a in call.args if not a.startswith("-")] if verbose or "-v" in call.args else None
    if names is None:
        return ShellResult.error(f"{SH}: command: phonesim serves `command -v NAME` only", 2)
    lines, status = [], 0
    for name in names:
        if name in BUILTINS:
            lines.append(f"{name} is a shell builtin" if verbose else name)
        elif call.device.files.stat(f"/system/bin/{name}") is not None and "/" not in name:
            lines.append(f"{name} is a tracked alias for /system/bin/{name}" if verbose else f"/system/bin/{name}")
        else:
            status = 1
            if verbose:
                lines.append(f"{name} not found")
    return ShellResult("".join(f"{line}\n" for line in lines).encode(), code=status)


def _export(call: Call) -> ShellResult:
    for arg in call.args:
        name, sep, value = arg.partition("=")
        if sep:
            call.session.env[name] = value
    return ShellResult()


def _unset(call: Call) -> ShellResult:
    for name in call.args:
        call.session.env.pop(name, None)
    return ShellResult()


BUILTINS: dict[str, Callable[[Call], ShellResult]] = {
    "cd": _cd, "pwd": _pwd, "echo": _echo, "exit": _exit, "test": _test, "[": _test, "command": _command,
    "type": _command, "export": _export, "unset": _unset, "true": lambda call: ShellResult(),
    "false": lambda call: ShellResult(code=1), ":": lambda call: ShellResult(),
}
