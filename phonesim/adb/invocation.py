"""What a served shell command receives and returns: `Call` (its arguments, standard input, the
device and the shell session it runs in) and `ShellResult` (stdout, stderr, exit status)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from phonesim.adb.limits import Budget

if TYPE_CHECKING:
    from phonesim.adb.device import SimDevice


@dataclass
class ShellResult:
    """What a command produced: stdout, stderr and the exit status."""

    stdout: bytes = b""
    stderr: bytes = b""
    code: int = 0

    @classmethod
    def error(cls, message: str, code: int = 1) -> ShellResult:
        return cls(b"", (message.rstrip("\n") + "\n").encode(), code)


@dataclass
class Session:
    """One `sh -c` run: working directory, variables, the last status and the time budget."""

    budget: Budget
    cwd: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    status: int = 0


@dataclass
class Call:
    """One command of a command line, as the tool implementing it sees it."""

    name: str
    args: list[str]
    device: SimDevice
    session: Session
    stdin: bytes = b""


Command = Callable[[Call], ShellResult]
