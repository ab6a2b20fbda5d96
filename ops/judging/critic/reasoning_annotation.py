"""Reasoning annotation of kept steps (MobileWizard §3.2–3.3, App. C.1): the four parts of structured
reasoning (self-verification, screen analysis, planning, action guidance) that lead to a step's
action, written by the critic that labelled the step, as targets of the reasoning reward.

Like MobileWizard's annotator, both read the step in its context: the previous, the current and
the next screen, and the action. `ProgrammaticAnnotator` (the programmatic critic's twin) writes
them from simulator state: screen names, the element the action hits, the task's instruction, the
critic's verdict on the previous step, and the sub-task the action achieves in hindsight (from
the current screen to the one the action leads to). `LLMAnnotator` (the LLM critic's twin) asks a
VLM for the four parts as JSON, with a confidence score; an answer below `min_confidence` is left
out, as MobileWizard sends it to a human. Neither raises for one step: a step that cannot be
annotated is an `AnnotationFailure` with a reason, counted by the caller.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ops.actions import POINTED_TYPES, Action, ActionType, ReasoningParts
from ops.actions.formats.reasoning import render_reasoning
from ops.judging.critic.llm_critic import action_log
from ops.agent.hint_marks import describe_step_action
from ops.judging.critic.visualize import step_context_panel, to_png
from ops.agent.episode import StepLabel, StepRecord, TaskSpec
from ops.agent.llm import JSONRequest, LLMClient
from ops.agent.llm_errors import LLMCallError
from ops.judging.critic.annotation_prompts import ReasoningAnnotationOutput, build_reasoning_annotation_prompt
from ops.agent.policy_prompt import element_label
from ops.judging.action_reward import tokens
from ops.agent.step_outcome import Screen, visible_change

SHOWN_ELEMENTS = 6  # elements a programmatic screen analysis names
MIN_MATCHING_WORD = 4  # shorter words of the task ("the", "to", "on") do not make an element relevant
EARLIER_STEPS = 12  # earlier steps the LLM annotator is shown, the most recent ones


@dataclass(frozen=True)
class StepToAnnotate:
    """One kept step in its attempt. `action` is the step's training target (its own action, or
    "finish the task" for a finish step); `labels` the critic's step labels of the attempt."""

    task: TaskSpec
    steps: Sequence[StepRecord]
    index: int
    action: Action
    labels: Sequence[StepLabel]
    final_screenshot_png: bytes | None

    @property
    def step(self) -> StepRecord:
        return self.steps[self.index]

    @property
    def previous(self) -> StepRecord | None:
        return self.steps[self.index - 1] if self.index else None

    def label(self, index: int) -> StepLabel | None:
        return next((label for label in self.labels if label.step == index), None)

    def next_screenshot(self) -> bytes | None:
        """The screen after the action: the next step's, or the attempt's final screen."""
        if self.index + 1 < len(self.steps):
            return self.steps[self.index + 1].screenshot_png
        return self.final_screenshot_png


@dataclass(frozen=True)
class AnnotationFailure:
    """Why one step has no annotation (`reason` is the counted category)."""

    reason: str
    detail: str


Annotation = ReasoningParts | AnnotationFailure


class ReasoningAnnotator(Protocol):
    name: str

    def annotate(self, items: Sequence[StepToAnnotate]) -> list[Annotation]:
        """One annotation or failure per item, in order; never raises for an item."""


def _checked(parts: ReasoningParts) -> Annotation:
    """`parts`, unless one could not be written back into a structured response (empty, or holding a
    tag of the format)."""
    try:
        render_reasoning(parts)
    except ValueError as exc:
        return AnnotationFailure("unwritable", str(exc))
    return parts


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def _where(step: StepRecord) -> str:
    """`the settings app's 'display' screen`, or `'launcher' screen` where the two names are one."""
    return f"'{step.screen}' screen" if step.screen == step.app else f"{step.app} app's '{step.screen}' screen"


def _action_words(action: Action, elements: list[dict]) -> str:
    if action.type == ActionType.TERMINATE:
        return f"terminate with status {action.status}"
    return describe_step_action(action, elements)


# --- programmatic --------------------------------------------------------------------------------


class ProgrammaticAnnotator:
    """The four parts from simulator state (module docstring); needs the steps' stored states."""

    name = "programmatic"

    def __init__(self, world_seed: int = 0) -> None:
        self.world_seed = world_seed

    def annotate(self, items: Sequence[StepToAnnotate]) -> list[Annotation]:
        return [self._one(item) for item in items]

    def _one(self, item: StepToAnnotate) -> Annotation:
        step = item.step
        if step.state is None:
            return AnnotationFailure("no_state", f"step {step.step}: no simulator state to annotate from")
        from phonesim.tasks import world_phone  # the simulator's annotator: only runs where its states exist

        phone = world_phone(item.task.template_id, self.world_seed)
        try:
            phone.restore(json.loads(step.state))
            phone.step(item.action)
            after = phone.observe()
        except Exception as exc:  # noqa: BLE001 — a state the simulator cannot replay costs this step only
            return AnnotationFailure("replay_failed", f"step {step.step}: {type(exc).__name__}: {exc}")
        return _checked(ReasoningParts(self.self_verification(item), self.screen_analysis(item),
                                       self.planning(item, after), self.action_guidance(item)))

    @staticmethod
    def self_verification(item: StepToAnnotate) -> str:
        """What the previous action did, from the previous and the current screen, and whether it
        brought the task closer (the critic's label of that step)."""
        step, before = item.step, item.previous
        if before is None:
            return f"Nothing has been done yet: the task starts on the {_where(step)}."
        if before.action is None:  # (its parse error is not quoted: it may name the format's tags)
            return "The previous output was not a valid action, so nothing changed."
        did = _action_words(Action.from_dict(before.action), before.elements)
        if not before.env_ok:
            outcome = f"The previous action, {did}, had no effect ({before.env_reason})."
        elif (before.app, before.screen) != (step.app, step.screen):
            outcome = f"The previous action, {did}, worked: it led from the '{before.screen}' screen to the " \
                      f"'{step.screen}' screen."
        elif visible_change(before, step):
            outcome = f"The previous action, {did}, worked: the '{step.screen}' screen changed."
        else:
            outcome = f"The previous action, {did}, left the '{step.screen}' screen unchanged."
        label = item.label(before.step)
        if label is None:
            return outcome
        return outcome + (" It brought the task closer to its goal." if label.reasonable
                          else " It did not bring the task closer to its goal.")

    @staticmethod
    def screen_analysis(item: StepToAnnotate) -> str:
        """The screen and its elements: those sharing words with the task first, then the ones that
        can be tapped."""
        step = item.step
        wanted = {t for t in tokens(item.task.instruction) if len(t) >= MIN_MATCHING_WORD}
        named = [(element_label(e), e) for e in step.elements]
        named = [(label, e) for label, e in named if not label.startswith("(")]
        relevant = [label for label, _ in named if wanted & set(tokens(label))]
        others = [label for label, e in named if e.get("clickable") and label not in relevant]
        text = f"The {_where(step)} is open ({len(step.elements)} elements)."
        if relevant:
            text += " Relevant to the task: " + ", ".join(f"'{t}'" for t in relevant[:SHOWN_ELEMENTS]) + "."
        room = SHOWN_ELEMENTS - min(len(relevant), SHOWN_ELEMENTS)
        if others and room:
            text += " Also there: " + ", ".join(f"'{t}'" for t in others[:room]) + "."
        return text

    @staticmethod
    def planning(item: StepToAnnotate, after: Screen) -> str:
        """The sub-task the action achieves, seen from the screen it leads to (hindsight, as
        MobileWizard's annotator reads the next screen), toward the task."""
        step, action, task = item.step, item.action, item.task.instruction.strip().rstrip(".")
        if action.type == ActionType.TERMINATE:
            return (f"The task is done ({task}): finish it." if action.status == "success"
                    else f"The task cannot be done here ({task}): stop.")
        if action.type == ActionType.ANSWER:
            subtask = "answer the question with what the screen shows"
        elif after.app != step.app:
            subtask = f"go to the {after.app} app ('{after.screen}' screen)"
        elif after.screen != step.screen:
            subtask = f"get from the '{step.screen}' screen to the '{after.screen}' screen"
        elif visible_change(step, after):
            subtask = f"on the '{step.screen}' screen, {_action_words(action, step.elements)}"
        else:
            subtask = f"look further on the '{step.screen}' screen"
        return _sentence(f"{subtask}, toward the task: {task}")

    @staticmethod
    def action_guidance(item: StepToAnnotate) -> str:
        """The action in words, with its point on the 0–1000 grid for a tap or press."""
        action, elements = item.action, item.step.elements
        text = _action_words(action, elements)
        point = action.point
        if point is None and action.element is not None and 0 <= action.element < len(elements):
            x0, y0, x1, y1 = elements[action.element]["grid"]
            point = ((x0 + x1) // 2, (y0 + y1) // 2)
        if action.type in POINTED_TYPES and point is not None:
            text += f" at ({round(point[0])}, {round(point[1])})"
        return _sentence(text)


# --- LLM -----------------------------------------------------------------------------------------


@dataclass
class AnnotationCallCounts:
    """Calls of the LLM annotator: made, answered after the repair round, failed by `ErrorKind` value."""

    calls: int = 0
    repaired: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, int]:
        return {"calls": self.calls, "repaired": self.repaired,
                **{f"failures_{kind}": n for kind, n in sorted(self.failures.items())}}


class LLMAnnotator:
    """The four parts from a VLM through `LLMClient` (prompt: `ops.judging.critic.annotation_prompts`), all steps
    concurrently. Counts of its calls are in `counts`. Safe to share between threads."""

    def __init__(self, client: LLMClient, name: str, min_confidence: float = 0.5) -> None:
        if not 0 <= min_confidence <= 1:
            raise ValueError(f"LLMAnnotator.min_confidence must be in [0, 1], got {min_confidence}")
        self.client, self.name, self.min_confidence = client, name, min_confidence
        self.counts = AnnotationCallCounts()
        self._lock = threading.Lock()

    def annotate(self, items: Sequence[StepToAnnotate]) -> list[Annotation]:
        results = self.client.map_json([self._request(item) for item in items])
        out: list[Annotation] = []
        for result in results:
            with self._lock:
                self.counts.calls += 1
                if isinstance(result, LLMCallError):
                    self.counts.failures[result.kind.value] += 1
                elif result.repaired:
                    self.counts.repaired += 1
            if isinstance(result, LLMCallError):
                out.append(AnnotationFailure(f"llm_{result.kind.value}", str(result)))
                continue
            answer: ReasoningAnnotationOutput = result.value
            if answer.confidence < self.min_confidence:
                out.append(AnnotationFailure("low_confidence", f"confidence {answer.confidence:.2f} is below "
                                                               f"{self.min_confidence}"))
                continue
            out.append(_checked(answer.parts()))
        return out

    @staticmethod
    def _request(item: StepToAnnotate) -> JSONRequest:
        step, before, after = item.step, item.previous, item.next_screenshot()
        panel = step_context_panel(before.screenshot_png if before else None, step.screenshot_png, item.action,
                                   step.elements, after)
        earlier = [f"Step {s.step + 1}: " + " ".join(f"[{kind}] {detail}".split())
                   for s in item.steps[:item.index] for kind, detail in [action_log(s, False)]][-EARLIER_STEPS:]
        action = f"{_action_words(item.action, step.elements)} ({json.dumps(item.action.to_dict(), sort_keys=True)})"
        messages = build_reasoning_annotation_prompt(item.task.instruction, earlier, action, to_png(panel),
                                                     has_previous=before is not None, has_next=after is not None)
        return JSONRequest(messages, ReasoningAnnotationOutput, key=f"{item.task.task_id}#{step.step}")
