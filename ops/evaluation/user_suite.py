"""A user's own held-out suite: a task file (YAML or JSONL) of tasks on their apps, evaluated by
`benchmark_results` with the critic as judge and reported in the same Pass@k tables.

Each task: `app` (an app name of the apps file), `instruction`, and optionally `id`, `step_budget`
(default 20), `difficulty` (L1-L4; default unrated), `expected_answer` (a question's answer) and
`success` (what success looks like, in words). The agent sees the instruction only; the critic's
decision call also reads the expected answer and the success description
(`ops.judging.critic.llm_critic.judged_task_text`).

YAML: a list of tasks, or `{tasks: [...]}`. JSONL: one task object per line.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ops.agent.episode import TaskSpec
from ops.judging.critic.llm_critic import EXPECTED_ANSWER, SUCCESS_CRITERIA

UNRATED = "unrated"  # difficulty of a user's task that names none
MAX_TASKS = 10_000


class UserTaskFileError(ValueError):
    """The task file cannot be read or a task in it is invalid (the message names the file and the task)."""


class UserTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    app: str = Field(min_length=1, max_length=100)
    instruction: str = Field(min_length=1, max_length=2000)
    id: str | None = Field(default=None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")
    step_budget: int = Field(default=20, ge=1, le=200)
    difficulty: Literal["L1", "L2", "L3", "L4"] | None = None
    expected_answer: str | None = Field(default=None, max_length=500)
    success: str | None = Field(default=None, max_length=2000)


def _records(path: Path) -> list[object]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UserTaskFileError(f"{path}: line {number} is not JSON ({exc.msg})") from None
        return records
    if path.suffix not in (".yaml", ".yml"):
        raise UserTaskFileError(f"{path}: a task file is .yaml, .yml or .jsonl")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserTaskFileError(f"{path}: not YAML ({exc})") from None
    data = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(data, list):
        raise UserTaskFileError(f"{path}: expected a list of tasks (or {{tasks: [...]}})")
    return data


def load_user_tasks(path: str | Path, apps: Collection[str]) -> list[tuple[TaskSpec, str]]:
    """The file's tasks as (runnable task, difficulty), ids `<id>#0` (`id` default: `<app>-<n>`); every
    task's app must be among `apps` (the run's target apps)."""
    path = Path(path)
    if not path.is_file():
        raise UserTaskFileError(f"{path}: no such task file")
    records = _records(path)
    if not records:
        raise UserTaskFileError(f"{path}: no task in it")
    if len(records) > MAX_TASKS:
        raise UserTaskFileError(f"{path}: {len(records)} tasks, at most {MAX_TASKS}")
    out: list[tuple[TaskSpec, str]] = []
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        try:
            task = UserTask.model_validate(record)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in exc.errors())
            raise UserTaskFileError(f"{path}: task {number}: {problems}") from None
        if task.app not in apps:
            raise UserTaskFileError(f"{path}: task {number}: app {task.app!r} is not a target app "
                                    f"({', '.join(sorted(apps))})")
        name = task.id or f"{task.app}-{number}"
        if name in seen:
            raise UserTaskFileError(f"{path}: task {number}: id {name!r} repeats")
        seen.add(name)
        params = {key: value for key, value in ((SUCCESS_CRITERIA, task.success), (EXPECTED_ANSWER, task.expected_answer))
                  if value}
        out.append((TaskSpec(task_id=f"{name}#0", instruction=task.instruction, step_budget=task.step_budget,
                             app=task.app, params=params), task.difficulty or UNRATED))
    return out
