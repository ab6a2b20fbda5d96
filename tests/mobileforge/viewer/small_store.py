"""A small store laid out as a run leaves it, built in seconds without Dagster: two simulator tasks
rolled out K=2 times by a scripted agent (attempt 1 goes wrong, attempt 2 follows the solver's plan,
with attempt 1's hint in its prompt) and judged by the programmatic critic; their fork pairs; a
benchmark of a `base` that fails both held-out tasks against an `rft` that passes one; and a
`device` experiment shaped like a run on adb devices (no ground truth, no simulator template or
state, an LLM critic's name) and without a benchmark.

Rollouts and episodes are the real engine's (`run_rollouts`, `evaluate_policy`), staged by the
real attempt store; the tables are the collected ones, written where the IO manager writes them.
Works on any pyarrow filesystem, so on S3 too.
"""

from __future__ import annotations

import dataclasses

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from ops.actions import Action, ActionType
from ops.data.attempt_store import ParquetAttemptStore, collect_tables, load_attempt
from ops.evaluation.benchmark import first_apps
from ops.remedial.corrective_teaching import ScriptedPolicy
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.evaluation.evaluate import evaluate_policy
from training.methods.grsd.fork_pairs import detect_fork_pairs
from training.methods.grsd.forks import ForkConfig
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import PARQUET_WRITE_OPTIONS, from_rows
from ops.environments.simulator import SimEnvironment, template_task_spec
from phonesim.solver import solve
from phonesim.tasks import instantiate
from resources.experiment import UNPARTITIONED, staging_path
from resources.storage import DATA_PARQUET, StorageLocation

TRAIN_TEMPLATES = ("settings.connect_wifi", "settings.airplane_on")  # curriculum tasks
HELD_OUT = {"clock.alarm_on": "L1", "contacts.delete": "L2"}  # benchmark tasks and their difficulty
K = 2
BACK = Action(ActionType.SYSTEM_BUTTON, button="back")
DONE = Action(ActionType.TERMINATE, status="success")
SWIPE = Action(ActionType.SWIPE, direction="up")
SCREEN = (270, 600)
ROLLOUT_VERSION = "base:tiny@T0"


def small_env() -> SimEnvironment:
    return SimEnvironment(size=SCREEN)


def _plan(template_id: str) -> list[Action]:
    instance = instantiate(template_id, 0)
    return solve(instance.make_phone(SCREEN), instance)


def write_table(location: StorageLocation, experiment: str, asset: str, frame: pl.DataFrame) -> None:
    fs, root = location.filesystem()
    sink = pa.BufferOutputStream()
    pq.write_table(frame.to_arrow(), sink, **PARQUET_WRITE_OPTIONS)
    path = f"{root}/{experiment}/{asset}/{UNPARTITIONED}"
    fs.create_dir(path, recursive=True)
    with fs.open_output_stream(f"{path}/{DATA_PARQUET}") as out:
        out.write(sink.getvalue().to_pybytes())


def _curriculum(tasks) -> pl.DataFrame:
    return from_rows([{
        "task_id": t.task_id, "app": t.app, "instruction": t.instruction, "step_budget": t.step_budget,
        "core_functionality": t.template_id, "variation_type": "parameter_change", "prerequisites": None,
        "source_trace_id": f"{t.app}.0", "verifiable": t.template_id is not None, "template_id": t.template_id,
        "template_seed": t.seed if t.template_id else None, "template_params": None, "goal_screen": None,
        "goal_state": None} for t in tasks], "curriculum_tasks")


def _rollouts(location: StorageLocation, experiment: str):
    fs, root = location.filesystem()
    tasks = [template_task_spec(instantiate(t, 0)) for t in TRAIN_TEMPLATES]
    script: list[Action] = []
    for task in tasks:  # attempt 1: the plan's first action, a swipe, back and a premature finish; attempt 2: the plan
        plan = _plan(task.template_id)
        script += [plan[0], SWIPE, BACK, DONE, *plan, DONE]
    store = ParquetAttemptStore(fs, staging_path(root, experiment, "rollouts"))
    agent = ScriptedPolicy("elements", script, version=ROLLOUT_VERSION)
    run_rollouts(tasks, small_env, agent, ProgrammaticCritic(), store, RolloutConfig(attempts=K, max_parallel_tasks=1))
    return tasks, store, collect_tables(store, ROLLOUT_VERSION, tasks)


def _benchmark(location: StorageLocation, experiment: str) -> pl.DataFrame:
    fs, root = location.filesystem()
    tasks = [(template_task_spec(instantiate(t, 0)), level) for t, level in HELD_OUT.items()]
    expected = first_apps([t for t, _ in tasks])
    frames = []
    for name, passes in (("base", ()), ("rft", ("clock.alarm_on",))):
        script = []
        for task, _ in tasks:
            script += ([*_plan(task.template_id), DONE] if task.template_id in passes else [BACK, DONE]) * K
        store = ParquetAttemptStore(fs, staging_path(root, experiment, f"benchmark/{name}"))
        agent = ScriptedPolicy("elements", script, version=f"{name}:tiny@T0.7")
        frames.append(evaluate_policy(name, agent, tasks, small_env, store, K, expected, max_parallel_tasks=1).results)
    return pl.concat(frames)


def _as_on_a_device(location: StorageLocation, source_store: ParquetAttemptStore, tasks) -> None:
    """The rollouts again as a run on adb devices stores them: no judge's ground truth, no template,
    no simulator state, judged by an LLM critic."""
    fs, root = location.filesystem()
    store = ParquetAttemptStore(fs, staging_path(root, "device", "rollouts"))
    device_tasks = [dataclasses.replace(t, template_id=None, params={}) for t in tasks]
    for task in device_tasks:
        for attempt in range(1, K + 1):
            record = load_attempt(source_store, ROLLOUT_VERSION, task.task_id, attempt)
            store.save(dataclasses.replace(
                record, task=task, ground_truth=None, final_state=None,
                steps=[dataclasses.replace(s, state=None) for s in record.steps],
                feedback=dataclasses.replace(record.feedback, critic="llm:openai/critic")))
    attempts, steps, feedback = collect_tables(store, ROLLOUT_VERSION, device_tasks)
    for asset, frame in (("curriculum_tasks", _curriculum(device_tasks)), ("rollout_attempts", attempts),
                         ("rollout_steps", steps), ("critic_feedback", feedback)):
        write_table(location, "device", asset, frame)


def build_small_store(location: StorageLocation, experiment: str = "default") -> dict[str, pl.DataFrame]:
    """Fill `location` with the experiments of the module docstring; the tables written, by asset."""
    tasks, store, (attempts, steps, feedback) = _rollouts(location, experiment)
    tables = {"curriculum_tasks": _curriculum(tasks), "rollout_attempts": attempts, "rollout_steps": steps,
              "critic_feedback": feedback, "fork_pairs": detect_fork_pairs(steps, attempts, ForkConfig()),
              "benchmark_results": _benchmark(location, experiment)}
    for asset, frame in tables.items():
        write_table(location, experiment, asset, frame)
    _as_on_a_device(location, store, tasks)
    return tables
