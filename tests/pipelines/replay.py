"""The served simulator's ground truth for stored attempts, read only by tests: each staged attempt is
replayed action by action through an `AdbEnvironment` on a served simulator of the same brands (the
same adb commands the run sent), every step's screen checked against the one the attempt stored, and the
final state judged against what its instruction asks (`tests.support.standin_llm.Goal`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import polars as pl
import yaml

from ops.actions import Action
from ops.agent.episode import TaskSpec
from ops.environments.adb import AdbEnvConfig, AdbEnvironment, DeviceApp
from phonesim.adb import AdbServer
from phonesim.brands import branded_phone, brands_from
from tests.support.standin_llm import Goal


@dataclass(frozen=True)
class Replayed:
    stage: str  # rollouts, rft, benchmark/<policy>
    task_id: str
    attempt: int
    decision: int  # the critic's verdict the run stored
    kind: str
    truth: bool | None  # None: the replay diverged from the stored attempt (left out of the figures)


def staged_attempts(staging: Path) -> list[tuple[str, Path]]:
    """(stage, summary file) of every attempt staged under an experiment's `_staging` directory."""
    out = []
    for summary in sorted(staging.rglob("attempt_*.json")):
        parts = summary.relative_to(staging).parts  # <stage...>/<policy>/<task>/attempt_k.json
        out.append(("/".join(parts[:-3]), summary))
    return out


def replay_all(staging: Path, brands_file: Path, apps: dict[str, tuple[str, str, str]],
               goal_of: Callable[[dict], Goal | None], size: tuple[int, int]) -> list[Replayed]:
    """Every staged attempt whose task has a goal, replayed and judged (see the module docstring)."""
    brands = brands_from(yaml.safe_load(brands_file.read_text()))
    device_apps = tuple(DeviceApp(name, package) for name, package, _ in apps.values())
    out = []
    with AdbServer(devices=1, size=size) as server:
        serial = server.serials()[0]
        env = AdbEnvironment(AdbEnvConfig(serial=serial, port=server.port, apps=device_apps, settle_s=0.0,
                                          retry_delay_s=0.05))
        for stage, path in staged_attempts(staging):
            summary = json.loads(path.read_text())
            task = TaskSpec(**summary["task"])
            goal = goal_of(summary["task"])
            if goal is None or summary["feedback"] is None:
                continue
            server.device(serial).phone = branded_phone(0, size, brands)
            steps = pl.read_parquet(path.with_suffix(".parquet")).sort("step")
            truth = _replay(env, server, serial, task, steps, goal)
            out.append(Replayed(stage, task.task_id, summary["attempt"], summary["feedback"]["decision"], goal.kind,
                                truth))
    return out


def _replay(env: AdbEnvironment, server: AdbServer, serial: str, task: TaskSpec, steps: pl.DataFrame,
            goal: Goal) -> bool | None:
    observation = env.reset(task)
    for row in steps.iter_rows(named=True):
        if (observation.app, observation.screen) != (row["app"], row["screen"]):
            return None
        if row["action"] and row["env_ok"]:
            env.step(Action.from_dict(json.loads(row["action"])))
        observation = env.observe()
    phone = server.device(serial).phone
    return phone.current_app == goal.app and (goal.screen is None or phone.current_screen == goal.screen)
