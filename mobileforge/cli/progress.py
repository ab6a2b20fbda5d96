"""What `mobileforge run` shows while it works: one rich progress line per stage on a terminal,
plain timestamped lines when its output goes to a file or pipe (CI logs, `nohup`, `| tee`),
everything else (run logs, library output) in a log file."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from pipelines.run.observer import LineObserver, Observer

if TYPE_CHECKING:
    from dagster import DagsterRun

STATUS_CHARS = 72  # the latest log line of a stage, cut to fit one terminal line
PLAIN_STATUS_EVERY_S = 60.0  # without a terminal, a stage's latest log line at most this often


@contextmanager
def output_to_log(path: Path) -> Iterator[IO[str]]:
    """Send this process's stdout and stderr (file descriptors 1 and 2, inherited by the code
    server, run workers and step processes it starts) to `path`; yields the terminal's stdout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    terminal = os.fdopen(os.dup(saved_out), "w", buffering=1)
    with open(path, "a", buffering=1) as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield terminal
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)
            terminal.close()


class StageProgress:
    """An `Observer` of `pipelines.run.experiment.run_experiment` drawing one line per stage:
    spinner, stage, runs done of total, the stage's latest log line, elapsed time."""

    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.fields[stage]:<12}"),
                                 MofNCompleteColumn(), TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                                 console=console)
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> StageProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def stage_started(self, stage: str, runs: int) -> None:
        self.tasks[stage] = self.progress.add_task("", total=runs, stage=stage, status="")

    def run_message(self, stage: str, message: str) -> None:
        line = message.splitlines()[0] if message else ""
        self.progress.update(self.tasks[stage], status=line[:STATUS_CHARS])

    def run_finished(self, stage: str, run: DagsterRun, failed_checks: list[str]) -> None:
        self.progress.advance(self.tasks[stage])
        for check in failed_checks:
            self.progress.console.print(f"[red]check failed[/red] ({stage}): {check}")

    def stage_finished(self, stage: str, seconds: float) -> None:
        self.progress.update(self.tasks[stage], status="done")

    def notice(self, message: str) -> None:
        self.progress.console.print(message, soft_wrap=True)


@contextmanager
def stage_progress(terminal: IO[str]) -> Iterator[Observer]:
    """The live display on a terminal; timestamped plain lines otherwise (a live display would
    show nothing until the end), with a stage's latest log line at most every minute."""
    console = Console(file=terminal)
    if console.is_terminal:
        with StageProgress(console) as progress:
            yield progress
        return

    def line(text: str) -> None:
        terminal.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        terminal.flush()

    yield LineObserver(line, status_every_s=PLAIN_STATUS_EVERY_S)
