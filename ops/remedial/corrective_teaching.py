"""Corrective teaching (MobileWizard §3.4.4): remedial trajectories grafted onto failed rollouts.

For each attempt the critic judged failed, the step it names as the failure (`failure_step`)
splits the attempt: the agent's steps before it are kept and a teacher (`ops.remedial.teachers`)
completes the task from the state there. The grafted trajectory is replayed from the task's
start on a fresh environment: the kept steps must reproduce their stored states, prompts and
actions, and the teacher's actions are written the way the agent writes (its prompt style and
output format, history and hints), so every step can train the agent. In the structured-reasoning
style (MobileWizard §3.3) that includes the four reasoning parts: a `ReasoningAnnotator` (the
programmatic one by default, from the previous, current and next screen and the action) writes them
for each teacher step, and the memory carries them to the next step as it carries the agent's own.
The verifier (a critic)
then judges the replayed attempt; only a pass is kept. Every other graft ends with a counted
reason (`REASONS`): MobileWizard hands those to a human annotator, here they are reported.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from ops.actions import (FORMATS, POINTED_TYPES, Action, ActionType, ParsedOutput, ReasoningParts, UnsupportedAction,
                         render_structured)
from ops.actions.formats import label_echo
from ops.data.attempt_store import attempt_row, attempt_summary, feedback_row, step_record, step_rows
from ops.judging.critic.reasoning_annotation import AnnotationFailure, ReasoningAnnotator, StepToAnnotate
from ops.agent.episode import (AttemptRecord, Critic, Environment, Hint, Observation, PolicyOutput, PolicyRequest,
                         StepRecord, TaskSpec)
from ops.agent.policy import PromptedPolicy
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import PromptStyle, element_label
from ops.agent.reasoning_memory import ReasoningMemory
from ops.rollout.engine import describe_action
from ops.data.schemas import from_rows
from ops.agent.step_outcome import verified_outcome
from ops.actions.coords import element_centre
from ops.samples.step_samples import element_under
from ops.remedial.teachers import Teacher, TeacherFailure, TeachingRequest

# Why a failed attempt yields no remedial trajectory (the teachers' own reasons included, ops.remedial.teachers).
REASONS = {
    "beyond_max_attempts": "not grafted: past the number of failed attempts asked for",
    "task_unknown": "the attempt's task is not among the tasks given (the curriculum changed since)",
    "hints_missing": "an attempt whose hints the failed attempt read has no hint in the critic's feedback",
    "no_failure_step": "the critic named no failing step, or one outside the attempt",
    "no_state": "the environment keeps no state to hand to the teacher (not the simulator)",
    "replay_diverged": "a kept step did not reproduce its stored state or action on the fresh environment",
    "prompt_mismatch": "a kept step's prompt differs from its stored one (another prompt style or hints)",
    "no_plan": "the teacher found no way to the goal",
    "over_budget": "the teacher's way to the goal does not fit the steps left",
    "invalid_output": "a policy teacher's output did not parse",
    "gave_up": "a policy teacher terminated with failure",
    "teacher_error": "the teacher raised an error",
    "unsayable": "the agent's output format cannot write one of the teacher's actions",
    "unannotated": "a teacher's step could not be annotated with the four reasoning parts the agent's style writes",
    "action_rejected": "the environment did not apply one of the teacher's actions (in the graft or the teacher's own)",
    "verifier_error": "the verifier raised an error",
    "not_verified": "the verifier judged the grafted trajectory a failure",
}


class ScriptedPolicy(PromptedPolicy):
    """A policy that says given actions, in order, in a prompt style's output format.

    Corrective teaching writes the teacher's actions with it, so they read as the agent's own
    outputs; it is also a scripted teacher policy. In the element-list style an action at an
    element's centre is said as that element, the way that style names its targets; the other
    styles say an action naming an element at the element's centre (their formats write points).
    The structured-reasoning style writes an action only with its four reasoning parts (`say`'s
    `reasoning`).
    """

    def __init__(self, style: PromptStyle | str, actions: Sequence[Action] = (), version: str = "scripted"):
        super().__init__(style, version)
        self._script = list(actions)

    def spoken(self, action: Action, observation: Observation) -> Action:
        """`action` as this style expresses it on `observation`'s screen: in the element-list style, an
        action at the centre of an element names that element (one elsewhere in it, e.g. a value on a
        slider, keeps its point); in the others an action naming an element is at its centre."""
        if self.style != PromptStyle.ELEMENTS:
            centre = element_centre(action.element, observation.elements)
            if centre is None:
                return action
            return dataclasses.replace(action, element=None, point=(int(centre[0]), int(centre[1])))
        if action.point is None or action.end_point is not None or action.type not in POINTED_TYPES | {ActionType.TYPE}:
            return action
        index = element_under(action.point, observation.elements)
        if index is None or not _at_centre(action.point, observation.elements[index]["grid"]):
            return action
        return dataclasses.replace(action, point=None, element=index)

    def say(self, action: Action, request: PolicyRequest, reasoning: ReasoningParts | None = None) -> PolicyOutput:
        """The output writing `action` for `request`, with the prompt this style builds for it;
        `reasoning` is the structured style's four parts (ignored by the other styles). Raises
        `UnsupportedAction` (a ValueError) when the format cannot write the action (or, in the
        structured style, when no reasoning is given)."""
        action = self.spoken(action, request.observation)
        if self.style == PromptStyle.ELEMENTS:
            text = label_echo.render_target(action, [element_label(e) for e in request.observation.elements])
        elif self.keeps_memory:
            if reasoning is None:
                raise UnsupportedAction(f"the {self.style.value} style writes an action only after its four "
                                        "reasoning parts, and none were given")
            text = render_structured(action, reasoning)
        else:
            text = FORMATS[self.output_format].render(action)
        return PolicyOutput(raw_text=text, prompt=messages_to_json(self.prompt_for(request)), latency_s=0.0)

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        if len(requests) > len(self._script):
            raise RuntimeError(f"{self.version}: {len(requests)} requests, {len(self._script)} scripted actions left")
        return [self.say(self._script.pop(0), r) for r in requests]


def _at_centre(point: Sequence[float], box: Sequence[float]) -> bool:
    """Within a grid unit of the box's centre (the solver taps centres, rounded to the grid)."""
    return abs(point[0] - (box[0] + box[2]) / 2) <= 1 and abs(point[1] - (box[1] + box[3]) / 2) <= 1


@dataclass(frozen=True)
class FailedAttempt:
    """A failed attempt as corrective teaching reads it."""

    task: TaskSpec
    attempt: int
    policy_version: str
    hints: list[Hint]  # the corrective hints its prompts carried
    steps: list[StepRecord]
    failure_step: int  # the first step not kept: the teacher starts from the state before it


@dataclass
class Graft:
    """What became of one failed attempt: the replayed, judged trajectory (None when it ended
    before the verifier) and, unless it was verified, why not."""

    task_id: str
    attempt: int
    kept_steps: int
    teacher_steps: int = 0
    record: AttemptRecord | None = None
    failure: str | None = None  # a key of REASONS or of the teacher's failures
    detail: str = ""

    @property
    def verified(self) -> bool:
        return self.failure is None


@dataclass
class TeachingReport:
    """Counts of one corrective-teaching pass (MobileWizard's remedial-data yield)."""

    failures_seen: int = 0  # attempts the critic judged failed
    repaired: int = 0  # grafts that reached the verifier
    verified: int = 0  # grafts the verifier passed: the remedial trajectories
    failures: Counter = field(default_factory=Counter)  # reason -> failed attempts without a remedial trajectory
    unrepaired: list[Graft] = field(default_factory=list)  # for manual annotation (MobileWizard §3.4.4)

    @property
    def yield_rate(self) -> float:
        return self.verified / self.failures_seen if self.failures_seen else 0.0


def failed_attempts(attempts: pl.DataFrame, steps: pl.DataFrame, feedback: pl.DataFrame,
                    tasks: Mapping[str, TaskSpec], report: TeachingReport) -> list[FailedAttempt]:
    """The attempts of the rollout tables the critic judged failed (`critic_decision` 0), with
    their steps, hints and failing step; those that cannot be grafted are counted in `report`."""
    hints = {(r["task_id"], r["attempt"]): r for r in feedback.iter_rows(named=True)}
    steps_of: dict[tuple[str, int], list[StepRecord]] = {}
    for row in steps.sort("task_id", "attempt", "step").iter_rows(named=True):
        steps_of.setdefault((row["task_id"], row["attempt"]), []).append(step_record(row))
    out = []
    for row in attempts.filter(pl.col("critic_decision") == 0).sort("task_id", "attempt").iter_rows(named=True):
        key = (row["task_id"], row["attempt"])
        report.failures_seen += 1
        task, kept = tasks.get(row["task_id"]), steps_of.get(key, [])
        read = [_hint(hints.get((row["task_id"], j)), j) for j in row["hints_used"]]
        failure_step = hints[key]["failure_step"] if key in hints else None
        if failure_step is None and not kept:
            failure_step = 0  # nothing was done: the teacher starts from the task's start
        reason = ("task_unknown" if task is None else "hints_missing" if None in read
                  else "no_failure_step" if failure_step is None or not 0 <= failure_step < max(len(kept), 1)
                  else None)
        if reason:
            report.failures[reason] += 1
            report.unrepaired.append(Graft(row["task_id"], row["attempt"], 0, failure=reason, detail=REASONS[reason]))
            continue
        out.append(FailedAttempt(task, row["attempt"], row["policy_version"], read, kept, failure_step))
    return out


def _hint(row: Mapping | None, attempt: int) -> Hint | None:
    """The hint of one `critic_feedback` row, None when the row or its hint is missing."""
    if row is None or row["hint_summary"] is None or row["key_mistake"] is None:
        return None
    return Hint(attempt=attempt, key_mistake=row["key_mistake"], what_to_avoid=list(row["what_to_avoid"]),
                suggested_approach=list(row["suggested_approach"]),
                important_insights=list(row["important_insights"]), hint_summary=row["hint_summary"])


class _Replay:
    """One grafted attempt being played on a fresh environment, step by step."""

    def __init__(self, failed: FailedAttempt, env: Environment, voice: ScriptedPolicy):
        self.failed, self.env, self.voice = failed, env, voice
        self.observation = env.reset(failed.task)
        self.steps: list[StepRecord] = []
        self.history: list[str] = []
        self.memory = ReasoningMemory() if voice.keeps_memory else None  # the structured style's, as in rollouts
        self.answer: str | None = None
        self.terminated = False

    def request(self) -> PolicyRequest:
        history = [] if self.memory is not None else list(self.history)
        return PolicyRequest(self.observation, self.failed.task.instruction, history, self.failed.hints, self.memory)

    def seen(self, state: str | None) -> StepRecord:
        """The current step as far as it is known before acting: what it sees, no output yet."""
        seen = self.observation
        return StepRecord(step=len(self.steps), screenshot_png=seen.screenshot_png, elements=seen.elements,
                          a11y=seen.a11y, app=seen.app, screen=seen.screen, prompt="", raw_output="", action=None,
                          parse_error=None, conclusion="", latency_s=0.0, env_ok=False, env_reason=None, state=state)

    def reasoning_for(self, action: Action, state: str, writer: ReasoningAnnotator) -> ReasoningParts | AnnotationFailure:
        """The four parts leading to the teacher's `action` on the current step, as `writer` annotates it
        in its context (the steps so far, this screen, the action; no step labels: the verifier has not
        judged yet)."""
        [parts] = writer.annotate([StepToAnnotate(self.failed.task, [*self.steps, self.seen(state)], len(self.steps),
                                                  action, (), None)])
        return parts

    def play(self, output: PolicyOutput, parsed: ParsedOutput, state: str) -> str | None:
        """Apply one output (as the rollout engine does); the environment's reason if it refused."""
        action = parsed.action if parsed.ok else None
        result = self.env.step(action) if action is not None else None
        record = dataclasses.replace(
            self.seen(state), prompt=output.prompt, raw_output=output.raw_text,
            action=action.to_dict() if action else None, parse_error=None if action else parsed.action.reason,
            conclusion=parsed.conclusion or "", latency_s=output.latency_s, env_ok=bool(result and result.ok),
            env_reason=result.reason if result else f"invalid action: {parsed.action.reason}",
            reasoning=parsed.reasoning)
        self.steps.append(record)
        self.history.append(parsed.conclusion or describe_action(parsed.action))
        if action is not None and action.type == ActionType.ANSWER:
            self.answer = action.text
        self.terminated = action is not None and action.type == ActionType.TERMINATE
        if not self.terminated:
            before, self.observation = self.observation, self.env.observe()
            if self.memory is not None:
                record.verified_outcome = verified_outcome(parsed.action, record.env_ok, before, self.observation)
                self.memory.update(parsed, record.verified_outcome)
        return None if result is None or result.ok else result.reason or "not applied"

    def record(self, policy_version: str) -> AttemptRecord:
        task = self.failed.task
        record = AttemptRecord(
            task=task, attempt=self.failed.attempt, policy_version=policy_version, hints=self.failed.hints,
            steps=self.steps, end_reason="terminated" if self.terminated else "budget", answer=self.answer,
            final_state=self.env.snapshot(), final_screenshot_png=self.env.observe().screenshot_png)
        record.ground_truth = self.env.ground_truth(task, self.answer, self.terminated, len(self.steps))
        return record


def graft(failed: FailedAttempt, teacher: Teacher, env_factory: Callable[[], Environment], voice: ScriptedPolicy,
          verifier: Critic, writer: ReasoningAnnotator | None = None) -> Graft:
    """Keep `failed`'s steps before its failing step, let `teacher` finish from there, replay the
    whole from the task's start and have `verifier` judge it (module docstring). `writer` annotates
    the teacher's steps with the four reasoning parts when `voice` is the structured style (without
    one, that style cannot say them: `unsayable`)."""
    kept = failed.steps[:failed.failure_step]
    outcome = Graft(failed.task.task_id, failed.attempt, len(kept))

    def fail(reason: str, detail: str) -> Graft:
        outcome.failure, outcome.detail = reason, detail
        return outcome

    replay = _Replay(failed, env_factory(), voice)
    for stored in kept:
        state, request = replay.env.snapshot(), replay.request()
        if state is None:
            return fail("no_state", f"step {stored.step}: the environment returned no snapshot")
        if stored.state is None or json.loads(state) != json.loads(stored.state):
            return fail("replay_diverged", f"step {stored.step}: the state differs from the stored one")
        output = PolicyOutput(stored.raw_output, messages_to_json(voice.prompt_for(request)), stored.latency_s)
        if output.prompt != stored.prompt:
            return fail("prompt_mismatch", f"step {stored.step}: the {voice.style.value} prompt differs from the stored one")
        parsed = voice.parse(stored.raw_output, replay.observation)
        if (parsed.action.to_dict() if parsed.ok else None) != stored.action:
            return fail("replay_diverged", f"step {stored.step}: the output reads as another action now")
        replay.play(output, parsed, state)
    state = replay.env.snapshot()
    if state is None:
        return fail("no_state", "the environment returned no snapshot at the failing step")
    steps_left = failed.task.step_budget - len(kept)
    try:
        plan = teacher.complete(TeachingRequest(failed.task, state, steps_left, list(replay.history), replay.memory))
    except TeacherFailure as failure:
        return fail(failure.reason, failure.detail)
    except Exception as exc:  # noqa: BLE001 — a teacher's error costs this attempt only, counted
        return fail("teacher_error", f"{type(exc).__name__}: {exc}")
    if len(plan) > steps_left:
        return fail("over_budget", f"the teacher's {len(plan)} steps exceed the {steps_left} left")
    outcome.teacher_steps = len(plan)
    for action in plan:
        if replay.terminated:
            return fail("teacher_error", "the teacher acted after terminating")
        state, request = replay.env.snapshot(), replay.request()
        reasoning = None
        if voice.keeps_memory and writer is not None:
            reasoning = replay.reasoning_for(voice.spoken(action, replay.observation), state, writer)
            if isinstance(reasoning, AnnotationFailure):
                return fail("unannotated", f"step {len(replay.steps)}: {reasoning.reason}: {reasoning.detail}")
        try:
            output = voice.say(action, request, reasoning)
        except ValueError as exc:  # UnsupportedAction, or an element outside the list
            return fail("unsayable", f"{action.to_json()}: {exc}")
        parsed = voice.parse(output.raw_text, replay.observation)
        if not parsed.ok or parsed.action != voice.spoken(action, replay.observation):
            return fail("unsayable", f"{action.to_json()} reads back as {output.raw_text!r}")
        refused = replay.play(output, parsed, state)
        if refused:
            return fail("action_rejected", f"step {len(replay.steps) - 1}: {action.to_json()}: {refused}")
    outcome.record = replay.record(f"{failed.policy_version}+{teacher.name}")
    try:
        outcome.record.feedback = verifier.evaluate(outcome.record)
    except Exception as exc:  # noqa: BLE001 — counted like a teacher's error
        return fail("verifier_error", f"{type(exc).__name__}: {exc}")
    if outcome.record.feedback.decision != 1:
        return fail("not_verified", outcome.record.feedback.reason)
    return outcome


def teach(failed: Sequence[FailedAttempt], teacher: Teacher, env_factory: Callable[[], Environment],
          voice: ScriptedPolicy, verifier: Critic, report: TeachingReport,
          on_graft: Callable[[Graft], None] | None = None, writer: ReasoningAnnotator | None = None) -> list[Graft]:
    """Graft every failed attempt (`writer`: see `graft`); the verified grafts, in order. Counts go to `report`."""
    verified = []
    for attempt in failed:
        outcome = graft(attempt, teacher, env_factory, voice, verifier, writer)
        report.repaired += outcome.record is not None
        if outcome.verified:
            report.verified += 1
            verified.append(outcome)
        else:
            report.failures[outcome.failure] += 1
            report.unrepaired.append(outcome)
        if on_graft:
            on_graft(outcome)
    return verified


def remedial_tables(records: Sequence[AttemptRecord]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `attempts` and `steps` tables of grafted records, as the rollout tables hold attempts."""
    attempts = [attempt_row(json.loads(json.dumps(attempt_summary(r))), r.final_screenshot_png) for r in records]
    return from_rows(attempts, "attempts"), from_rows([row for r in records for row in step_rows(r)], "steps")


def remedial_feedback(records: Sequence[AttemptRecord]) -> pl.DataFrame:
    """The `critic_feedback` table of grafted records: the verifier's judgements, step labels included."""
    return from_rows([feedback_row(r.task.task_id, r.attempt, json.loads(r.feedback.to_json())) for r in records],
                     "critic_feedback")
