"""LLM curriculum (MobileForge §2.2.2, appendix G.1 prompt 1): each explored trajectory, with its
original goal, screenshots, few-shot examples, principles and the tasks already generated for
the same app, goes to the curriculum LLM, which assesses it and writes 3–8 new self-contained
tasks; every task is linked to the trajectory it came from.

Concurrency: trajectories run in waves. A wave holds up to `wave_width` trajectories of every
app; its calls go out together through `LLMClient.map_json`, so apps proceed in parallel, and
each call sees every task generated for its app in earlier waves. With `wave_width=1` (the
default) each call sees all earlier tasks of its app, as in the paper; a wider wave trades that
for fewer, larger batches. Failed calls are counted, reported and logged; they do not stop the
run, unless every call failed: then `mine_with_llm` raises `CurriculumLLMError` naming the count
and the causes, since a curriculum step that generated nothing from an unreachable endpoint must
not pass for a successful one.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ops.curriculum.model import CurriculumTask, Trajectory, trajectory_app, trajectory_id
from ops.agent.llm import JSONRequest, JSONResult, LLMClient
from ops.agent.llm_errors import LLMCallError
from ops.curriculum.prompts import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TASKS,
    DEFAULT_MIN_TASKS,
    DEFAULT_PRINCIPLES,
    CurriculumOutput,
    TrajectoryEvaluation,
    build_curriculum_prompt,
    curriculum_context,
)
from ops.curriculum.prompts import CurriculumTask as GeneratedTask

log = logging.getLogger(__name__)


class CurriculumLLMError(RuntimeError):
    """Every curriculum LLM call failed; nothing was generated."""


# App-neutral examples of the task shape (MobileForge prompt 1 "few-shot examples").
DEFAULT_FEWSHOT = (
    GeneratedTask(task_id="example_1", instruction="Create a new alarm for 6:45 AM that repeats on weekdays.",
                  step_budget=8, core_functionality="Alarm creation", variation_type="scenario_application",
                  prerequisites=""),
    GeneratedTask(task_id="example_2", instruction="Open the note titled 'Groceries' and add 'milk' as a new line.",
                  step_budget=6, core_functionality="Note editing", variation_type="parameter_change",
                  prerequisites="A note titled 'Groceries' exists"),
    GeneratedTask(task_id="example_3", instruction="How many unread messages are in the inbox? Answer with a number.",
                  step_budget=4, core_functionality="Information retrieval", variation_type="simplification",
                  prerequisites=""),
)


@dataclass(frozen=True)
class LLMCurriculumConfig:
    min_tasks: int = DEFAULT_MIN_TASKS
    max_tasks: int = DEFAULT_MAX_TASKS
    max_steps: int = DEFAULT_MAX_STEPS
    max_screenshots: int = 8  # per trajectory; evenly subsampled, first and last always kept
    wave_width: int = 1  # trajectories per app per wave (see module docstring)
    max_existing_in_prompt: int = 100  # most recent tasks of the app shown as "already generated"
    fewshot: tuple[GeneratedTask, ...] = DEFAULT_FEWSHOT
    principles: str = DEFAULT_PRINCIPLES

    def __post_init__(self) -> None:
        if self.max_screenshots < 2:
            raise ValueError("LLMCurriculumConfig.max_screenshots: need at least 2 (first and last screen)")
        if self.wave_width < 1:
            raise ValueError("LLMCurriculumConfig.wave_width: need at least 1")
        if self.max_existing_in_prompt < 0:
            raise ValueError("LLMCurriculumConfig.max_existing_in_prompt: need >= 0")


@dataclass(frozen=True)
class TrajectoryOutcome:
    """What one curriculum call did with one trajectory."""

    trajectory_id: str
    app: str
    wave: int
    n_tasks: int
    evaluation: TrajectoryEvaluation | None  # the LLM's assessment of the trajectory
    error: dict[str, Any] | None  # LLMCallError.to_dict() when the call failed


@dataclass
class LLMCurriculumResult:
    tasks: list[CurriculumTask]
    outcomes: list[TrajectoryOutcome] = field(default_factory=list)

    @property
    def failures(self) -> list[TrajectoryOutcome]:
        return [o for o in self.outcomes if o.error is not None]

    def summary(self) -> dict[str, Any]:
        """Plain numbers for asset metadata."""
        out: dict[str, Any] = {"trajectories": len(self.outcomes), "calls_failed": len(self.failures),
                               "tasks": len(self.tasks), "waves": 1 + max((o.wave for o in self.outcomes), default=-1)}
        for o in self.failures:
            key = f"failures_{o.error['kind']}"
            out[key] = out.get(key, 0) + 1
        scores = [o.evaluation.step_quality_analysis.trajectory_quality_score
                  for o in self.outcomes if o.evaluation is not None]
        if scores:
            out["trajectory_quality_mean"] = sum(scores) / len(scores)
        return out


def trajectory_screenshots(path: Trajectory, limit: int) -> list[bytes]:
    """The trajectory's screens in order (first before-screen, then every after-screen),
    evenly subsampled to at most `limit`, keeping the first and the last."""
    shots = [path[0].before.screenshot_png] + [t.after.screenshot_png for t in path]
    if len(shots) <= limit:
        return shots
    picks = sorted({round(i * (len(shots) - 1) / (limit - 1)) for i in range(limit)})
    return [shots[i] for i in picks]


def curriculum_request(path: Trajectory, existing: Sequence[str], config: LLMCurriculumConfig) -> JSONRequest:
    """Prompt G.1 for one trajectory, keyed by its id."""
    messages = build_curriculum_prompt(
        trajectory_app(path), path[0].goal, trajectory_screenshots(path, config.max_screenshots),
        step_summaries=[t.summary for t in path], fewshot_examples=config.fewshot,
        existing_tasks=list(existing)[-config.max_existing_in_prompt:] if config.max_existing_in_prompt else (),
        principles=config.principles, min_tasks=config.min_tasks, max_tasks=config.max_tasks,
        max_steps=config.max_steps)
    context = curriculum_context(config.min_tasks, config.max_tasks, config.max_steps)
    return JSONRequest(messages, CurriculumOutput, context=context, key=trajectory_id(path))


def tasks_from_output(output: CurriculumOutput, path: Trajectory) -> list[CurriculumTask]:
    """The generated tasks as curriculum records linked to `path` (not verifiable: no judge)."""
    tid = trajectory_id(path)
    return [CurriculumTask(
        task_id=f"llm:{tid}:{k}", app=trajectory_app(path), instruction=g.instruction.strip(),
        step_budget=g.step_budget, core_functionality=g.core_functionality.strip(),
        variation_type=g.variation_type, prerequisites=g.prerequisites.strip() or None,
        source_trace_id=tid, verifiable=False) for k, g in enumerate(output.generated_tasks, start=1)]


def waves(paths: Sequence[Trajectory], width: int) -> list[list[Trajectory]]:
    """Trajectories grouped into waves of up to `width` per app, apps in sorted order and
    each app's trajectories in their given order."""
    by_app: dict[str, list[Trajectory]] = {}
    for path in paths:
        by_app.setdefault(trajectory_app(path), []).append(path)
    n_waves = max((-(-len(ps) // width) for ps in by_app.values()), default=0)
    return [[p for app in sorted(by_app) for p in by_app[app][w * width:(w + 1) * width]] for w in range(n_waves)]


def mine_with_llm(client: LLMClient, paths: Sequence[Trajectory], config: LLMCurriculumConfig = LLMCurriculumConfig(),
                  existing: Sequence[CurriculumTask] = ()) -> LLMCurriculumResult:
    """Run prompt G.1 over every trajectory (see module docstring). `existing` tasks (e.g. the
    offline curriculum, or an earlier run) count as already generated for their apps."""
    ids = [trajectory_id(p) for p in paths]
    if len(set(ids)) != len(ids):
        raise ValueError("trajectory ids repeat; pass each root-to-leaf path once")
    generated: dict[str, list[str]] = {}
    for task in existing:
        generated.setdefault(task.app, []).append(task.instruction)
    result = LLMCurriculumResult(tasks=[])
    for w, wave in enumerate(waves(paths, config.wave_width)):
        requests = [curriculum_request(p, generated.get(trajectory_app(p), []), config) for p in wave]
        answers = client.map_json(requests)
        for path, answer in zip(wave, answers, strict=True):
            result.outcomes.append(_record(path, answer, w, result, generated))
    _report_failures(result)
    return result


def _report_failures(result: LLMCurriculumResult) -> None:
    """Warn with the count when calls failed; raise `CurriculumLLMError` when all of them did."""
    failures = result.failures
    if not failures:
        return
    kinds = Counter(o.error["kind"] for o in failures)
    causes = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
    example = failures[0].error["message"]
    if len(failures) == len(result.outcomes):
        raise CurriculumLLMError(
            f"all {len(failures)} curriculum LLM calls failed ({causes}); first error: {example}. "
            "No task was generated: check the curriculum LLM endpoint, model and key.")
    log.warning("curriculum LLM: %d of %d calls failed (%s); first error: %s",
                len(failures), len(result.outcomes), causes, example)


def _record(path: Trajectory, answer: JSONResult | LLMCallError, wave: int, result: LLMCurriculumResult,
            generated: dict[str, list[str]]) -> TrajectoryOutcome:
    app, tid = trajectory_app(path), trajectory_id(path)
    if isinstance(answer, LLMCallError):
        return TrajectoryOutcome(tid, app, wave, 0, None, answer.to_dict())
    tasks = tasks_from_output(answer.value, path)
    result.tasks += tasks
    generated.setdefault(app, []).extend(t.instruction for t in tasks)
    return TrajectoryOutcome(tid, app, wave, len(tasks), answer.value.evaluation, None)
