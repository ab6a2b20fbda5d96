"""The memory a structured-reasoning agent carries between steps (MobileWizard §3.3, eq. 2):
long-term information from each step's screen analysis, the action history (each action
guidance with its verified outcome) and the planning history, rendered into the next prompt.

Bounded: each unit keeps its newest `MemoryLimits.recent` entries in full (cut to `entry_chars`),
the `older` entries before them as short heads (`older_chars`), and only a count of anything
earlier. An entry is one line (its whitespace collapsed). A plan or a screen note equal to the
one before it is not repeated. So a rendered memory stays under a few thousand characters
whatever the episode's length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ops.actions import ParsedOutput, ParseFailure

ELLIPSIS = "…"
ACTION_HISTORY_TITLE = "Action history (action guidance [verified outcome]):"


class StepOutcome(str, Enum):
    """The verified outcome of a step's action (the `s` of MobileWizard's g_i(s)): from the next
    step's self-verification, or from the environment or a critic, as the caller knows it."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNVERIFIED = "unverified"


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """How much of each memory unit is kept and shown."""

    recent: int = 5
    entry_chars: int = 300
    older: int = 10
    older_chars: int = 80

    def __post_init__(self) -> None:
        for name in ("recent", "entry_chars", "older", "older_chars"):
            value, least = getattr(self, name), 0 if name == "older" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"MemoryLimits.{name} must be an integer >= {least}, got {value!r}")


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered item: the step it came from, its text, and (actions only) its outcome."""

    step: int
    text: str
    outcome: StepOutcome | None = None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


@dataclass(slots=True)
class _Unit:
    title: str
    entries: list[MemoryEntry] = field(default_factory=list)
    dropped: int = 0

    def add(self, entry: MemoryEntry, limits: MemoryLimits, *, skip_repeat: bool) -> None:
        if skip_repeat and self.entries and self.entries[-1].text == entry.text:
            return
        self.entries.append(entry)
        excess = len(self.entries) - (limits.recent + limits.older)
        if excess > 0:
            del self.entries[:excess]
            self.dropped += excess

    def render(self, limits: MemoryLimits) -> list[str]:
        lines = [self.title]
        if self.dropped:
            lines.append(f"- ({self.dropped} earlier entries not shown)")
        n_older = max(0, len(self.entries) - limits.recent)
        for i, entry in enumerate(self.entries):
            text = _cut(entry.text, limits.older_chars) if i < n_older else entry.text
            outcome = f" [{entry.outcome.value}]" if entry.outcome else ""
            lines.append(f"- step {entry.step}: {text}{outcome}")
        if not self.entries and not self.dropped:
            lines.append("- none yet")
        return lines


class ReasoningMemory:
    """H_{n-1} = (long-term information, action history, planning history) of MobileWizard eq. 2."""

    def __init__(self, limits: MemoryLimits | None = None) -> None:
        self.limits = limits or MemoryLimits()
        self.steps = 0
        self.info = _Unit("Long-term information (from screen analysis):")
        self.actions = _Unit(ACTION_HISTORY_TITLE)
        self.plans = _Unit("Planning history (sub-tasks):")

    def update(self, step: ParsedOutput, outcome: StepOutcome | str) -> None:
        """Remember one step: its screen analysis, its action guidance with `outcome`, its plan.
        A step without structured reasoning (a parse failure, or free-form thinking) still takes
        its place in the action history, as a note with the parser's reason."""
        outcome = StepOutcome(outcome)
        self.steps += 1
        parts = step.reasoning
        if parts is None:
            failed = isinstance(step.action, ParseFailure)
            note = f"(invalid output: {step.action.reason})" if failed else "(output without structured reasoning)"
            self.actions.add(self._entry(note, outcome), self.limits, skip_repeat=False)
            return
        self.info.add(self._entry(parts.screen_analysis), self.limits, skip_repeat=True)
        self.actions.add(self._entry(parts.action_guidance, outcome), self.limits, skip_repeat=False)
        self.plans.add(self._entry(parts.planning), self.limits, skip_repeat=True)

    def _entry(self, text: str, outcome: StepOutcome | None = None) -> MemoryEntry:
        return MemoryEntry(self.steps, _cut(" ".join(text.split()), self.limits.entry_chars), outcome)

    def render(self) -> str:
        """The three units as prompt text, one line per entry."""
        return "\n".join(line for unit in (self.info, self.actions, self.plans) for line in unit.render(self.limits))
