"""One writer per experiment: a lock file per (storage root, experiment), held for a whole
`mobileforge run`, so two runs cannot interleave writes into one experiment's storage.

The lock is an advisory `flock` on `<root>/_locks/<experiment>.lock` (for an s3:// root, on a file
of this host's temp directory: it then guards against runs on this host only). The kernel drops
it when its process ends, even by kill -9; the file also records its owner (run, pid, host, start
time, command), which the refusal names, and which a clean release erases. An owner record found
on a free lock is a run that ended without releasing it: its lock is taken over, with a line
saying so. `refuse_if_held` reads that record alone (no lock taken, nothing created), so the CLI
refuses a busy experiment before it imports the asset graph.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import psutil

from resources.experiment_names import check_experiment_name

LOCKS_DIR = "_locks"


@dataclass(frozen=True)
class LockOwner:
    """Who holds an experiment's lock."""

    run: str
    pid: int
    host: str
    started_at: str
    command: str

    def describe(self) -> str:
        return f"run {self.run} (pid {self.pid} on {self.host} since {self.started_at}: {self.command})"


class ExperimentBusy(RuntimeError):
    """Another live run materializes this experiment."""


def lock_path(root_uri: str, experiment: str) -> Path:
    """The lock file of `experiment` under storage root `root_uri`."""
    check_experiment_name(experiment)
    if root_uri.startswith("s3://"):
        base = Path(tempfile.gettempdir()) / "mobileforge-locks" / hashlib.sha256(root_uri.encode()).hexdigest()[:16]
    else:
        base = Path(root_uri).expanduser().resolve() / LOCKS_DIR
    return base / f"{experiment}.lock"


def _busy(experiment: str, holder: LockOwner | None, path: Path) -> ExperimentBusy:
    by = holder.describe() if holder else "another run (starting up)"
    return ExperimentBusy(f"experiment {experiment!r} is being materialized by {by}; wait for it to finish "
                          f"or use another --experiment (lock file {path})")


def _live_here(owner: LockOwner) -> bool:
    """Whether `owner` is a process of this host that still runs (not a later one with its pid)."""
    if owner.host != socket.gethostname():
        return False  # another host's process cannot be looked at from here
    try:
        process = psutil.Process(owner.pid)
        started = datetime.fromisoformat(owner.started_at).timestamp()
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= started + 1
    except (psutil.Error, ValueError):
        return False


def refuse_if_held(root_uri: str, experiment: str) -> None:
    """ExperimentBusy naming the holder when the owner record of `experiment`'s lock names a live
    process of this host. Reads the record only: it takes no lock (a run starting at this moment is
    not refused because of it) and creates no file; `experiment_lock` remains the check that counts."""
    path = lock_path(root_uri, experiment)
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        owner = _read_owner(fd)
    finally:
        os.close(fd)
    if owner is not None and _live_here(owner):
        raise _busy(experiment, owner, path)


def _read_owner(fd: int) -> LockOwner | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 1 << 16)
    try:
        return LockOwner(**json.loads(text)) if text else None
    except (ValueError, TypeError):
        return None


@contextmanager
def experiment_lock(root_uri: str, experiment: str, report: Callable[[str], None] = print) -> Iterator[LockOwner]:
    """Hold the lock of `experiment` under `root_uri` for the `with` block; raises ExperimentBusy
    naming the holder when another live process holds it."""
    path = lock_path(root_uri, experiment)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the processes this one starts
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(experiment, _read_owner(fd), path) from None
        previous = _read_owner(fd)
        if previous is not None:
            report(f"experiment {experiment!r}: taking over the lock of {previous.describe()}, "
                   "which ended without releasing it")
        owner = LockOwner(run=uuid.uuid4().hex[:8], pid=os.getpid(), host=socket.gethostname(),
                          started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          command=" ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200])
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(asdict(owner)).encode(), 0)
        try:
            yield owner
        finally:
            os.ftruncate(fd, 0)  # a clean release leaves no owner behind
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
