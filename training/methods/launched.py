"""A trainer run under `accelerate launch` from inside a training step: the step's GPUs (or, with
`--cpu`, several CPU processes talking gloo) each run a process of `training.methods.launch`, with the
shipped FSDP / ZeRO-3 configs (training/trainers/accelerate/). The step writes the dataset and the
settings to disk, launches, streams the processes' output to its log and reads back the main process's
report: the same `TrainReport`, so the asset stores the same typed checkpoint as in one process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from training.trainers.settings import TrainSettings

if TYPE_CHECKING:
    from datasets import Dataset

    from training.trainers.runs import TrainReport

Kind = Literal["hifpo", "sft"]
LAST_LINES = 40  # of the processes' output, in the error of a failed launch


@dataclass(frozen=True)
class Launch:
    """How a trainer is launched: `processes` processes, on GPUs with `config_file` (an accelerate
    config), or on the CPU when it is None."""

    processes: int
    config_file: Path | None = None

    def flags(self, port: int) -> list[str]:
        # On the CPU, accelerate's `--cpu` starts several processes only through MPI; its multi-process
        # launcher (torch.distributed.run) starts them here, and trainers without a GPU set use_cpu, so
        # the processes form one CPU process group on gloo.
        placement = ["--config_file", str(self.config_file)] if self.config_file else [
            "--multi_gpu", "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
        return [*placement, "--num_processes", str(self.processes), "--main_process_port", str(port)]


def free_port() -> int:
    """A free TCP port on the loopback (for a launch's rendezvous, a server started for a while)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch_command(launch: Launch, kind: Kind, method: str, config: Path, base: Path, dataset: Path, out: Path,
                   report: Path) -> list[str]:
    """The `accelerate launch` command line of one training run."""
    return [sys.executable, "-m", "accelerate.commands.launch", *launch.flags(free_port()),
            "-m", "training.methods.launch", kind, *(["--method", method] if kind == "sft" else []),
            "--config", str(config), "--base", str(base), "--dataset", str(dataset), "--out", str(out),
            "--report", str(report)]


def train_launched(launch: Launch, kind: Kind, method: str, base: Path, dataset: Dataset, out: Path,
                   settings: TrainSettings, log: Callable[[str], None]) -> TrainReport:
    """Train `settings` on `dataset` from `base` into `out` under `accelerate launch`; the main
    process's report. A failed launch raises with the last lines the processes printed."""
    from training.trainers.step_datasets import save_step_dataset

    work = out.parent / f"{out.name}-launch"
    work.mkdir(parents=True, exist_ok=True)
    save_step_dataset(dataset, work / "dataset")
    config = work / "settings.json"
    config.write_text(json.dumps(settings.model_dump(mode="json")))
    report = work / "report.json"
    command = launch_command(launch, kind, method, config, base, work / "dataset", out, report)
    log(f"{method}: accelerate launch, {launch.processes} processes"
        f"{' with ' + launch.config_file.name if launch.config_file else ' on the CPU (gloo)'}")
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            lines = [*lines[-LAST_LINES + 1:], line.rstrip()]
    if process.returncode or not report.is_file():
        raise RuntimeError(f"{method}: accelerate launch exited with {process.returncode}:\n" + "\n".join(lines))
    return read_report(report)


def write_report(report: TrainReport, path: Path) -> None:
    path.write_text(json.dumps(asdict(report), default=str))


def read_report(path: Path) -> TrainReport:
    from training.trainers.runs import TrainReport

    data = json.loads(path.read_text())
    paths = {name: Path(data[name]) if data[name] is not None else None
             for name in ("checkpoint", "manifest_path", "tensorboard_dir")}
    return TrainReport(**{**data, **paths})
