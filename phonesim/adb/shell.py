"""The served device's `/system/bin/sh -c`: runs a command line (`phonesim.adb.syntax`) with
mksh's semantics for what adb clients send — expansion of `$?`/`$NAME` and globs, redirections
to device files, pipelines, `;`/`&&`/`||` with exit statuses — dispatching each command to a
builtin (`phonesim.adb.builtins`), a toybox tool (`toybox`, `grep`) or an Android command
(`commands`, `packages`). A name it does not serve answers as the device's shell does:
`/system/bin/sh: X: inaccessible or not found`, status 127.

Every command line runs with a budget (`ServerLimits.command_budget_s`, `.max_output_bytes`):
past it the line stops with status 124 and a message on stderr. Commands that touch the phone
hold the device's lock (waiting for it counts against the budget); file tools and grep do not,
so a slow grep on one connection holds up nobody else. A tool that fails unexpectedly answers a
shell error; it never takes the connection down.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass, field

from phonesim.adb import builtins, commands, grep, packages, toybox
from phonesim.adb.device import SimDevice
from phonesim.adb.files import FileError
from phonesim.adb.invocation import Call, Command, Session, ShellResult
from phonesim.adb.limits import Budget, BudgetExceeded
from phonesim.adb.syntax import Redirect, ShellSyntaxError, SimpleCommand, Word, parse

log = logging.getLogger(__name__)

SH = "/system/bin/sh"
BIN = "/system/bin"
TIMEOUT_STATUS = 124  # what `timeout(1)` returns for a command it stopped
PHONE_COMMANDS: dict[str, Command] = {**commands.COMMANDS, **packages.COMMANDS}
TOOLS: dict[str, Command] = {**toybox.TOOLS, **grep.TOOLS, **PHONE_COMMANDS}
GLOB_CHARS = "*?["
SHELL_PID = "4242"


def executables() -> list[str]:
    """The names `/system/bin` lists on a served device."""
    return sorted(set(TOOLS) | set(builtins.ALSO_IN_BIN))


@dataclass
class LineOutput:
    """A command line's stdout, stderr, both interleaved in the order written, and its status."""

    stdout: bytes = b""
    stderr: bytes = b""
    output: bytes = b""
    code: int = 0
    budget: Budget | None = field(default=None, repr=False)
    _chunks: list[tuple[int, bytes]] = field(default_factory=list, repr=False)

    def write(self, fd: int, data: bytes) -> None:
        if data:
            self._chunks.append((fd, data))

    def finish(self, code: int) -> LineOutput:
        self.stdout = b"".join(d for fd, d in self._chunks if fd == 1)
        self.stderr = b"".join(d for fd, d in self._chunks if fd == 2)
        self.output = b"".join(d for _, d in self._chunks)
        self.code = code
        return self

    @property
    def chunks(self) -> list[tuple[int, bytes]]:
        return list(self._chunks)

    @property
    def size(self) -> int:
        return sum(len(d) for _, d in self._chunks)

    def release(self) -> None:
        """Give the output's memory reservation back (once it has been sent)."""
        if self.budget is not None:
            self.budget.release()


def run_line(device: SimDevice, line: str) -> LineOutput:
    """Run a command line as `sh -c LINE` on the device."""
    budget = Budget(device.limits, device.pool)
    session = Session(budget, env={"PATH": BIN, "HOME": "/", "TMPDIR": "/data/local/tmp",
                                   "EXTERNAL_STORAGE": "/sdcard", "ANDROID_DATA": "/data"})
    return _run(device, line, session, LineOutput(budget=budget))


def _run(device: SimDevice, line: str, session: Session, out: LineOutput) -> LineOutput:
    try:
        lists = parse(line)
    except ShellSyntaxError as exc:
        out.write(2, f"{SH}: {exc}\n".encode())
        return out.finish(1)
    status = 0
    try:
        for and_or in lists:
            if (and_or.connector == "&&" and status != 0) or (and_or.connector == "||" and status == 0):
                continue
            status = _run_pipeline(device, and_or.pipeline, session, out)
            session.status = status
    except builtins.ShellExit as exc:
        status = exc.code
    except BudgetExceeded as exc:
        out.write(2, f"{SH}: {exc}\n".encode())
        status = TIMEOUT_STATUS
    return out.finish(status)


def _sh(call: Call) -> ShellResult:
    """`sh -c LINE`, `sh FILE` or `sh` reading its script from stdin: a nested shell, same budget."""
    args = call.args
    if args[:1] == ["-c"]:
        if len(args) < 2:
            return ShellResult.error(f"{SH}: -c: option requires an argument", 1)
        script = args[1]
    elif args:
        try:
            script = call.device.files.read(args[0], call.session.cwd).decode("utf-8", "surrogateescape")
        except FileError as exc:
            return ShellResult.error(f"{SH}: {args[0]}: {exc.reason}", 127)
    else:
        script = call.stdin.decode("utf-8", "surrogateescape")
    nested = Session(call.session.budget, call.session.cwd, dict(call.session.env))
    out = _run(call.device, script, nested, LineOutput())
    return ShellResult(out.stdout, out.stderr, out.code)


def _run_pipeline(device: SimDevice, pipeline: list[SimpleCommand], session: Session, out: LineOutput) -> int:
    data, status, replaced = b"", 0, False
    for index, command in enumerate(pipeline):
        session.budget.check()
        replaced = bool(command.words) and command.words[0].literal == "exec" and len(pipeline) == 1
        data, errors, status = _run_simple(device, command, session, data if index else b"")
        out.write(2, errors)
        session.budget.check_output(out.size + len(data))
    out.write(1, data)
    if replaced and len(pipeline[0].words) > 1:  # `exec CMD`: the shell became CMD, nothing runs after it
        raise builtins.ShellExit(status)
    return status


def _run_simple(device: SimDevice, command: SimpleCommand, session: Session,
                stdin: bytes) -> tuple[bytes, bytes, int]:
    """Run one command; return (stdout, stderr, status) as they leave its redirections."""
    try:
        for name, value in command.assignments:
            session.env[name] = "".join(expand(device, value, session))
        argv = [arg for word in command.words for arg in expand(device, word, session)]
        sinks, stdin = _open_redirects(device, command.redirects, session, stdin)
    except (FileError, _RedirectError) as exc:
        return b"", f"{SH}: {exc}\n".encode(), 1
    result = run_command(device, argv, session, stdin) if argv else ShellResult()
    streams: dict[int, bytes] = {1: b"", 2: b""}
    for fd, data in ((1, result.stdout), (2, result.stderr)):
        sink = sinks.get(fd, fd)
        if isinstance(sink, int):
            streams[sink] += data
        else:
            try:
                device.files.write(sink, data, session.cwd, append=True)
            except FileError as exc:
                streams[2] += f"{SH}: write error: {exc.reason}\n".encode()
    return streams[1], streams[2], result.code


class _RedirectError(Exception):
    pass


def _open_redirects(device: SimDevice, redirects: list[Redirect], session: Session,
                    stdin: bytes) -> tuple[dict[int, int | str], bytes]:
    """Where fds 1 and 2 go (1/2 for the pipe and the terminal, a path for a file), and stdin."""
    sinks: dict[int, int | str] = {1: 1, 2: 2}
    for redirect in redirects:
        targets = expand(device, redirect.target, session, glob=False)
        target = targets[0] if targets else ""
        if redirect.op in (">&", "<&"):
            if target not in ("1", "2"):
                raise _RedirectError(f"{target}: bad file descriptor")
            if redirect.fd in (1, 2):
                sinks[redirect.fd] = sinks[int(target)]
            continue
        if redirect.op == "<":
            try:
                stdin = device.files.read(target, session.cwd)
            except FileError as exc:
                raise _RedirectError(f"can't open {target}: {exc.reason}") from None
            continue
        try:
            device.files.write(target, b"", session.cwd, append=redirect.op == ">>")
        except FileError as exc:
            raise _RedirectError(f"can't create {target}: {exc.reason}") from None
        for fd in ((1, 2) if redirect.op == "&>" else (redirect.fd,)):
            if fd in (1, 2):
                sinks[fd] = target
    return sinks, stdin


def expand(device: SimDevice, word: Word, session: Session, glob: bool = True) -> list[str]:
    """A word's fields: parameters substituted, then globbed against the device's files."""
    text, pattern, globbing = [], [], False
    for part in word.parts:
        value = _parameter(part.text, session) if part.parameter else part.text
        text.append(value)
        if part.quoted or part.parameter:
            pattern.append("".join(f"[{c}]" if c in GLOB_CHARS else c for c in value))
        else:
            pattern.append(value)
            globbing = globbing or any(c in value for c in GLOB_CHARS)
    if glob and globbing:
        matches = _glob(device, "".join(pattern), session.cwd)
        if matches:
            return matches
    return ["".join(text)]


def _parameter(name: str, session: Session) -> str:
    special = {"?": str(session.status), "$": SHELL_PID, "#": "0", "0": SH, "!": "", "@": "", "*": "", "-": ""}
    return special[name] if name in special else session.env.get(name, "")


def _glob(device: SimDevice, pattern: str, cwd: str) -> list[str]:
    absolute = pattern.startswith("/")
    found = ["/" if absolute else ""]
    for component in [c for c in pattern.split("/") if c]:
        matched = []
        for base in found:
            if not any(c in component for c in GLOB_CHARS):
                matched.append(f"{base.rstrip('/')}/{component}" if base else component)
                continue
            try:
                entries = device.files.list(base or ".", cwd)
            except FileError:
                continue
            for name, _ in entries:
                if fnmatch.fnmatchcase(name, component) and (component.startswith(".") or not name.startswith(".")):
                    matched.append(f"{base.rstrip('/')}/{name}" if base else name)
        found = matched
    return sorted(path for path in found if device.files.stat(path, cwd, follow=False) is not None)


def run_command(device: SimDevice, argv: list[str], session: Session, stdin: bytes) -> ShellResult:
    """Run one command with its expanded arguments."""
    name, args = argv[0], argv[1:]
    if name == "exec":
        return run_command(device, args, session, stdin) if args else ShellResult()
    call = Call(name, args, device, session, stdin)
    if name in ("sh", f"{BIN}/sh"):
        return _sh(call)
    if name in builtins.BUILTINS:
        return builtins.BUILTINS[name](call)
    if "/" in name:
        node = device.files.stat(name, session.cwd)
        if node is None:
            return ShellResult.error(f"{SH}: {name}: inaccessible or not found", 127)
        tool_name = name.rsplit("/", 1)[1]
        if device.files.canonical(name, session.cwd) != f"{BIN}/{tool_name}" or tool_name not in TOOLS:
            return ShellResult.error(f"{SH}: {name}: can't execute: Permission denied", 126)
        name = call.name = tool_name
    tool = TOOLS.get(name)
    if tool is None:
        return ShellResult.error(f"{SH}: {name}: inaccessible or not found", 127)
    try:
        if name not in PHONE_COMMANDS:
            return tool(call)
        if not device.lock.acquire(timeout=max(session.budget.remaining(), 0.0)):
            raise BudgetExceeded(f"{name}: the device stayed busy past the command budget")
        try:
            return tool(call)
        finally:
            device.lock.release()
    except (BudgetExceeded, builtins.ShellExit):
        raise
    except FileError as exc:
        return ShellResult.error(f"{name}: {exc}")
    except Exception as exc:  # a tool's bug answers as a failed command, never as a dead connection
        log.exception("%s: %r failed", device.serial, argv)
        return ShellResult.error(f"{name}: internal error: {type(exc).__name__}: {str(exc)[:200]}", 1)
