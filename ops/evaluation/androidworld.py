"""The AndroidWorld task suite (google-research/android_world) as a benchmark, when the
`android_world` package is importable (installed from its repository; it needs a running
emulator, docs/devices.md).

A suite is AndroidWorld's own: `suite_utils.create_suite` instantiates each task of the
registry's family `n_task_combinations` times from per-instance seeds, so Pass@k runs over the
same instances AndroidWorld's `run.py` evaluates. Each instance is one benchmark task; the policy
acts through `AndroidWorldEnvironment`, our `Environment` over AndroidWorld's `AsyncEnv`, with
its canonical actions written in AndroidWorld's JSONAction by the `androidworld` action format.
The judge is the task's own `is_successful`, counted only when the agent declared the episode
complete, as AndroidWorld does.

Interfaces used (android_world at d9c569f, 2026-02): `registry.TaskRegistry().get_registry(family)`,
`suite_utils.create_suite(registry, n_task_combinations=, seed=, tasks=, env=)`,
`env.env_launcher.load_and_setup_env(console_port=, emulator_setup=, adb_path=, grpc_port=)`,
`AsyncEnv.reset(go_home=)` / `get_state(wait_to_stabilize=)` / `execute_action(JSONAction)` /
`foreground_activity_name` / `logical_screen_size` / `close()`, `State.pixels` / `ui_elements`
(`UIElement` text, content_description, class_name, bbox_pixels, is_* flags, resource_name),
`TaskEval.goal` / `complexity` / `app_names` / `initialize_task(env)` / `is_successful(env)` /
`tear_down(env)`, `env.json_action.JSONAction(**fields)`.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import polars as pl
from PIL import Image

from ops.actions import GRID, Action, ActionType
from ops.actions.codec import render, supports
from ops.actions.coords import screen_pixels
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.judging.judges import EnvironmentJudge, VerdictCritic
from ops.agent.episode import ANDROIDWORLD_JUDGE, AttemptRecord, EnvStep, GroundTruth, Observation, Policy, TaskSpec
from ops.rollout.engine import RolloutConfig, RolloutSummary, run_rollouts
from ops.data.schemas import from_rows

ANDROID_WORLD_SEED = 30  # the seed AndroidWorld's run.py uses for its suite


def available() -> bool:
    """True when the `android_world` package can be imported."""
    return importlib.util.find_spec("android_world") is not None


@dataclass(frozen=True)
class AndroidWorldConfig:
    """Which suite to build and which emulator to drive (AndroidWorld's own flags)."""

    family: str = "android_world"  # registry family: android_world, android, information_retrieval, ...
    tasks: tuple[str, ...] | None = None  # task names; None: the whole family
    n_task_combinations: int = 1  # instances per task, each from its own seed
    seed: int = ANDROID_WORLD_SEED
    console_port: int = 5554  # the emulator's console port (adb serial emulator-5554)
    grpc_port: int = 8554  # the emulator's -grpc port
    adb_path: str | None = None  # None: AndroidWorld's default
    emulator_setup: bool = False  # first-time app setup (once per fresh AVD)


def difficulty_of(complexity: float) -> str:
    """AndroidWorld complexity (about ten steps per unit) as our L1–L4 strata."""
    return f"L{min(4, max(1, math.ceil(complexity)))}"


def load_env(config: AndroidWorldConfig) -> Any:
    """AndroidWorld's `AsyncEnv` on the running emulator."""
    launcher = importlib.import_module("android_world.env.env_launcher")
    kwargs = dict(console_port=config.console_port, emulator_setup=config.emulator_setup, grpc_port=config.grpc_port)
    if config.adb_path:
        kwargs["adb_path"] = config.adb_path
    return launcher.load_and_setup_env(**kwargs)


def build_suite(config: AndroidWorldConfig, env: Any) -> dict[str, Any]:
    """task_id (`<TaskName>#<i>`) -> AndroidWorld task instance, in suite order."""
    registry_module = importlib.import_module("android_world.registry")
    suite_utils = importlib.import_module("android_world.suite_utils")
    registry = registry_module.TaskRegistry()
    suite = suite_utils.create_suite(registry.get_registry(config.family), n_task_combinations=config.n_task_combinations,
                                     seed=config.seed, tasks=list(config.tasks) if config.tasks else None, env=env)
    return {f"{name}#{i}": instance for name, instances in suite.items() for i, instance in enumerate(instances)}


def task_spec(task_id: str, instance: Any) -> TaskSpec:
    """Our task for one AndroidWorld instance: its goal, its step budget (10 per unit of complexity,
    as AndroidWorld allocates), its first app."""
    apps = tuple(instance.app_names)
    return TaskSpec(task_id=task_id, instruction=instance.goal, step_budget=max(1, int(10 * instance.complexity)),
                    app=apps[0] if apps else "")


def _element(index: int, ui: Any, size: tuple[int, int]) -> dict[str, Any]:
    box = ui.bbox_pixels
    x1, y1, x2, y2 = (round(box.x_min), round(box.y_min), round(box.x_max), round(box.y_max)) if box else (0, 0, 0, 0)
    width, height = size
    return {
        "index": index, "text": ui.text or "", "desc": ui.content_description or "", "class": ui.class_name or "",
        "resource_id": (ui.resource_name or "").split(":id/", 1)[-1], "bounds": [x1, y1, x2, y2],
        "grid": [round(x1 * GRID / width), round(y1 * GRID / height), round(x2 * GRID / width),
                 round(y2 * GRID / height)],
        "clickable": bool(ui.is_clickable), "long_clickable": bool(ui.is_long_clickable),
        "focused": bool(ui.is_focused), "scrollable": bool(ui.is_scrollable), "checkable": bool(ui.is_checkable),
        "checked": bool(ui.is_checked), "enabled": ui.is_enabled is not False,
    }


class AndroidWorldEnvironment:
    """Our `Environment` over AndroidWorld's `AsyncEnv`: one emulator, one episode at a time.
    Element indices are AndroidWorld's `ui_elements` indices (every element is kept), so an
    indexed action means the same element to both."""

    def __init__(self, env: Any, instances: dict[str, Any]) -> None:
        self.env = env
        self.instances = instances
        self._json_action = importlib.import_module("android_world.env.json_action").JSONAction
        self._current: Any = None
        self._claimed: str | None = None  # the status the agent declared

    def reset(self, task: TaskSpec) -> Observation:
        self.tear_down()
        self.env.reset(go_home=True)
        self._current = self.instances[task.task_id]
        self._current.initialize_task(self.env)
        self._claimed = None
        return self.observe()

    def step(self, action: Action) -> EnvStep:
        if action.type == ActionType.TERMINATE:  # the episode's end, not a device action
            self._claimed = action.status
            return EnvStep(True)
        if not supports(action, "androidworld"):
            return EnvStep(False, f"{action.type.value} {action.args} has no AndroidWorld JSONAction")
        fields = json.loads(render(action, "androidworld", frame=screen_pixels(*self.env.logical_screen_size)))
        try:
            self.env.execute_action(self._json_action(**fields))
        except ValueError as exc:  # JSONAction's own validation
            return EnvStep(False, f"AndroidWorld rejected {fields}: {exc}")
        return EnvStep(True)

    def observe(self) -> Observation:
        state = self.env.get_state(wait_to_stabilize=False)
        png = io.BytesIO()
        Image.fromarray(state.pixels).save(png, format="PNG")
        size = tuple(self.env.logical_screen_size)
        elements = [_element(i, ui, size) for i, ui in enumerate(state.ui_elements)]
        activity = self.env.foreground_activity_name or ""
        package, _, screen = activity.partition("/")
        return Observation(screenshot_png=png.getvalue(), elements=elements, a11y=None, app=package,
                           screen=screen.rsplit(".", 1)[-1])

    def snapshot(self) -> None:
        return None  # an emulator's state is not data; AndroidWorld sets tasks up itself

    def ground_truth(self, task: TaskSpec, answer: str | None, terminated: bool, n_steps: int) -> GroundTruth:
        """AndroidWorld's verdict: `is_successful`, counted when the agent declared completion.
        AndroidWorld does not count side effects; they are reported as 0."""
        score = float(self.instances[task.task_id].is_successful(self.env))
        declared = terminated and self._claimed == "success"
        success = declared and score > 0.5
        return GroundTruth(success=success, progress=min(1.0, max(0.0, score)),
                           false_complete=declared and not success, side_effects=0,
                           overdue=score > 0.5 and not terminated, judge=ANDROIDWORLD_JUDGE)

    def tear_down(self) -> None:
        """AndroidWorld's `tear_down` of the task set up last, if any."""
        if self._current is not None:
            self._current.tear_down(self.env)
            self._current = None

    def close(self) -> None:
        """Tear the last task down and close AndroidWorld's environment."""
        self.tear_down()
        self.env.close()


@dataclass(frozen=True)
class AndroidWorldEvaluation:
    results: pl.DataFrame  # `benchmark_results` rows
    summary: RolloutSummary


def evaluate_on_androidworld(policy_id: str, agent: Policy, config: AndroidWorldConfig, store: ParquetAttemptStore,
                             k: int, env: Any | None = None,
                             on_attempt: Callable[[AttemptRecord], None] | None = None) -> AndroidWorldEvaluation:
    """Pass@k material for `agent` on the suite: `k` hint-free attempts of every instance on one
    emulator (`env`, default: `load_env(config)`), judged by AndroidWorld, as `benchmark_results`
    rows (template = AndroidWorld task name, seed = instance index)."""
    env = env if env is not None else load_env(config)
    instances = build_suite(config, env)
    specs = [task_spec(task_id, instance) for task_id, instance in instances.items()]
    world = AndroidWorldEnvironment(env, instances)
    summary = run_rollouts(specs, lambda: world, agent, VerdictCritic(EnvironmentJudge(ANDROIDWORLD_JUDGE)), store,
                           RolloutConfig(attempts=k, use_hints=False, max_parallel_tasks=1), on_attempt)
    world.tear_down()
    attempts, steps, _ = collect_tables(store, agent.version, specs)
    return AndroidWorldEvaluation(from_rows(_rows(policy_id, attempts, steps, instances), "benchmark_results"), summary)


def _rows(policy_id: str, attempts: pl.DataFrame, steps: pl.DataFrame, instances: dict[str, Any]) -> list[dict]:
    first_actions = {(r["task_id"], r["attempt"]): r["action"] for r in steps.filter(pl.col("step") == 0)
                     .iter_rows(named=True)} if steps.height else {}
    rows = []
    for r in attempts.iter_rows(named=True):
        instance = instances[r["task_id"]]
        first = json.loads(first_actions.get((r["task_id"], r["attempt"])) or "null") or {}
        wanted = instance.app_names[0].lower() if instance.app_names else None
        rows.append({
            "policy_id": policy_id, "task_id": r["task_id"], "template_id": r["task_id"].split("#")[0],
            "difficulty": difficulty_of(instance.complexity), "seed": int(r["task_id"].split("#")[1]),
            "attempt": r["attempt"], "success": r["gt_success"], "progress": r["gt_progress"],
            "false_complete": r["gt_false_complete"], "side_effects": r["gt_side_effects"],
            "overdue": r["gt_overdue"], "steps": r["n_steps"],
            "first_app_right": first.get("type") == "open_app" and
            str(first.get("args", {}).get("app", "")).lower() == wanted,
            "answer_seen": None,  # android_world tasks name no evidence texts
            "judge": r["judge"],
        })
    return rows
