"""The hierarchical LLM critic (MobileForge §2.2.3, appendix G.2 prompts 2–4).

For one finished attempt: every step becomes an annotated before/after panel plus its raw
action log and is described by the VLM (prompt 2, all steps concurrently); a final decision
call (prompt 3) gets the step descriptions, the raw logs and the stitched last screens and
returns the outcome, feasibility, failure step and a label per step; a failed attempt or one
with an unreasonable step gets a corrective hint (prompt 4).

Prompts number steps from 1; `StepRecord.step`, `StepLabel.step` and
`CriticFeedback.failure_step` are 0-based. The conversion happens only in this module.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ops.actions import Action
from ops.judging.critic.visualize import before_after_panel, last_screens, to_png
from ops.agent.episode import AttemptRecord, CriticFeedback, StepLabel, StepRecord
from ops.agent.llm import JSONRequest, JSONResult, LLMClient
from ops.agent.llm_errors import LLMCallError
from ops.judging.critic.prompts import (
    CorrectiveHintOutput,
    CriticStep,
    FinalDecision,
    StepDescription,
    build_corrective_hint_prompt,
    build_final_decision_prompt,
    build_step_description_prompt,
)

STAGES = ("describe", "decide", "hint")  # prompts 2, 3, 4
RAW_OUTPUT_CHARS = 800  # how much of an unparseable model output the critic is shown

# Attempts recorded before final screenshots were stored (or by environments that cannot
# observe after the end) have no screen after the last action: the last step's After panel
# then repeats its Before screen and the action log says so, lest the VLM read the
# unchanged screen as "the action had no effect".
NO_AFTER_SCREEN_NOTE = "(no screenshot was recorded after this last step; the After panel repeats the Before screen)"


SUCCESS_CRITERIA = "success_criteria"  # task param: what success looks like, from a user's task file
EXPECTED_ANSWER = "expected_answer"  # task param: the answer a question task expects


def judged_task_text(instruction: str, params: dict[str, Any]) -> str:
    """The task as the critic's decision call reads it: the instruction, plus what its author said success
    looks like (a user's task file); the agent sees only the instruction."""
    notes = [f"{label}: {params[key]}" for key, label in ((SUCCESS_CRITERIA, "Success criteria"),
                                                           (EXPECTED_ANSWER, "Expected answer"))
             if params.get(key)]
    return "\n".join([instruction, *(f"({note}; written by the task's author, not shown to the agent)"
                                       for note in notes)])


class CriticError(RuntimeError):
    """An LLM call of the critic failed for good; the attempt has no feedback.

    `attempt_id` is `<task_id>#<attempt>`, `stage` one of `STAGES`, `kind` the
    `ops.agent.llm_errors.ErrorKind` value, `step` the 0-based step of a failed description call.
    """

    def __init__(self, attempt_id: str, stage: str, error: LLMCallError, step: int | None = None) -> None:
        where = f" (step {step})" if step is not None else ""
        super().__init__(f"critic {stage} call for {attempt_id}{where} failed: {error}")
        self.attempt_id = attempt_id
        self.stage = stage
        self.kind = error.kind.value
        self.step = step
        self.error = error


@dataclass
class CriticCallCounts:
    """Per-stage counts of the critic's LLM calls (calls made, answers that needed the
    repair round, failures by `ErrorKind` value) and attempts judged / lost."""

    calls: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    attempts_judged: int = 0
    attempts_failed: int = 0

    def summary(self) -> dict[str, int]:
        """Flat numbers for logs and Dagster metadata, e.g. `describe_calls`, `decide_failures_schema`."""
        out = {"attempts_judged": self.attempts_judged, "attempts_failed": self.attempts_failed}
        for stage in STAGES:
            out[f"{stage}_calls"] = self.calls[stage]
            out[f"{stage}_repaired"] = self.repaired[stage]
        for (stage, kind), n in sorted(self.failures.items()):
            out[f"{stage}_failures_{kind}"] = n
        return out


def attempt_id(attempt: AttemptRecord) -> str:
    return f"{attempt.task.task_id}#{attempt.attempt}"


def _action_of(step: StepRecord) -> Action | None:
    return Action.from_dict(step.action) if step.action is not None else None


def _element_label(element: dict[str, Any]) -> str:
    return (element.get("text") or element.get("desc") or "").split("\n")[0].strip()


def action_log(step: StepRecord, is_last: bool, missing_final: bool = True) -> tuple[str, str]:
    """The raw action log of a step as (action type, action detail) for the prompts.

    Valid actions show their canonical arguments (and the label of an element target);
    invalid ones show the parse error and the model's raw output, so they are described too.
    """
    if step.action is None:
        raw = step.raw_output
        if len(raw) > RAW_OUTPUT_CHARS:
            raw = raw[:RAW_OUTPUT_CHARS] + f"... [{len(step.raw_output) - RAW_OUTPUT_CHARS} more characters]"
        detail = f"the output was not a valid action ({step.parse_error}); raw output: {raw}"
        action_type = "invalid"
    else:
        action_type = step.action["type"]
        args = step.action.get("args") or {}
        detail = json.dumps(args, ensure_ascii=False, sort_keys=True)
        element = args.get("element")
        if isinstance(element, int) and 0 <= element < len(step.elements):
            label = _element_label(step.elements[element])
            if label:
                detail += f' (element {element}: "{label}")'
        if not step.env_ok:
            detail += f"; not applied by the device: {step.env_reason}"
    if is_last and missing_final:
        detail += " " + NO_AFTER_SCREEN_NOTE
    return action_type, detail


def step_panel_png(attempt: AttemptRecord, t: int) -> bytes:
    """Annotated Before panel of step t (0-based) beside the screen the next step saw."""
    steps = attempt.steps
    step = steps[t]
    if t + 1 < len(steps):
        after = steps[t + 1].screenshot_png
    else:
        after = attempt.final_screenshot_png or step.screenshot_png
    return to_png(before_after_panel(step.screenshot_png, after, _action_of(step), step.elements))


def _description_text(d: StepDescription) -> str:
    return f"{d.action_description} Screen before: {d.ui_description}"


class LLMCritic:
    """`Critic` that judges an attempt with a VLM through `LLMClient` (prompts 2–4).

    `last_screens`: how many final screenshots the decision call sees stitched together.
    `describe_steps`: False skips prompt 2 (the decision sees raw logs only), an ablation.
    Counts of every call are in `counts`. Safe to share between threads.
    """

    def __init__(self, client: LLMClient, name: str, last_screens: int = 3, describe_steps: bool = True) -> None:
        if last_screens < 1:
            raise ValueError(f"LLMCritic.last_screens must be >= 1, got {last_screens}")
        self.client = client
        self.name = name
        self.last_screens = last_screens
        self.describe_steps = describe_steps
        self.counts = CriticCallCounts()
        self._lock = threading.Lock()

    def evaluate(self, attempt: AttemptRecord) -> CriticFeedback:
        """Hierarchical feedback for `attempt`.

        Error contract: a failed LLM call, whatever the server sent or did not send, raises
        `CriticError` carrying the call's recorded `LLMCallError` (also counted in `counts`);
        the caller records the attempt as failed and a rerun judges it again. Any text the
        attempt holds can be sent (the client replaces lone surrogates)."""
        if not attempt.steps:
            raise ValueError(f"{attempt_id(attempt)}: an attempt without steps cannot be judged")
        try:
            feedback = self._evaluate(attempt)
        except CriticError:
            with self._lock:
                self.counts.attempts_failed += 1
            raise
        with self._lock:
            self.counts.attempts_judged += 1
        return feedback

    def _evaluate(self, attempt: AttemptRecord) -> CriticFeedback:
        task = judged_task_text(attempt.task.instruction, attempt.task.params)
        n = len(attempt.steps)
        missing_final = attempt.final_screenshot_png is None
        logs = [action_log(s, t == n - 1, missing_final) for t, s in enumerate(attempt.steps)]
        descriptions = self._describe(attempt, logs) if self.describe_steps else [None] * n
        critic_steps = [
            CriticStep(number=t + 1, action_type=kind, action_detail=detail, description=d)
            for t, ((kind, detail), d) in enumerate(zip(logs, descriptions))
        ]
        screens = [s.screenshot_png for s in attempt.steps]
        if not missing_final:
            screens.append(attempt.final_screenshot_png)
        final_png = to_png(last_screens(screens, self.last_screens))
        decision: FinalDecision = self._call(
            attempt, "decide",
            JSONRequest(build_final_decision_prompt(task, critic_steps, final_png), FinalDecision,
                        context={"n_steps": n}),
        )
        labels = [StepLabel(step=lab.step - 1, reasonable=lab.reasonable, rationale=lab.rationale)
                  for lab in decision.step_labels()]
        hint = None
        if decision.decision == 0 or not all(lab.reasonable for lab in labels):
            hint_output: CorrectiveHintOutput = self._call(
                attempt, "hint",
                JSONRequest(build_corrective_hint_prompt(task, critic_steps, decision), CorrectiveHintOutput),
            )
            hint = hint_output.to_hint(attempt.attempt)
        return CriticFeedback(
            decision=decision.decision,
            reason=decision.reason,
            failure_step=None if decision.failure_step is None else decision.failure_step - 1,
            task_feasible=decision.task_feasible,
            step_analysis=labels,
            hint=hint,
            critic=self.name,
            step_descriptions=[_description_text(d) for d in descriptions if d is not None],
        )

    def _describe(self, attempt: AttemptRecord, logs: list[tuple[str, str]]) -> list[StepDescription]:
        requests = [
            JSONRequest(build_step_description_prompt(attempt.task.instruction, kind, detail,
                                                      step_panel_png(attempt, t)),
                        StepDescription, key=str(t))
            for t, (kind, detail) in enumerate(logs)
        ]
        results = self.client.map_json(requests)
        for result in results:
            self._count("describe", result)
        for t, result in enumerate(results):
            if isinstance(result, LLMCallError):
                raise CriticError(attempt_id(attempt), "describe", result, step=t)
        return [r.value for r in results]  # type: ignore[union-attr]

    def _call(self, attempt: AttemptRecord, stage: str, request: JSONRequest) -> Any:
        try:
            result: JSONResult | LLMCallError = self.client.json(request.messages, request.schema, request.context)
        except LLMCallError as err:
            result = err
        self._count(stage, result)
        if isinstance(result, LLMCallError):
            raise CriticError(attempt_id(attempt), stage, result)
        return result.value

    def _count(self, stage: str, result: JSONResult | LLMCallError) -> None:
        with self._lock:
            self.counts.calls[stage] += 1
            if isinstance(result, LLMCallError):
                self.counts.failures[(stage, result.kind.value)] += 1
            elif result.repaired:
                self.counts.repaired[stage] += 1
