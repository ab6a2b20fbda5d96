"""MobileWizard's four-part structured reasoning (MobileWizard §3.3) inside the `<think>` block of
the mobilewizard format: writing the parts, and reading them back with what is wrong, if anything.

A structured response is exactly

    <think>
    <self_verification>…</self_verification>
    <screen_analysis>…</screen_analysis>
    <planning>…</planning>
    <action_guidance>…</action_guidance>
    </think>
    <answer>CLICK(500, 120)</answer>

with only whitespace around the tags. Reading is one linear scan over at most `MAX_PART_TAGS` tags
(no backtracking regex), so hostile text of any size up to the parsers' limit costs bounded work;
nothing here raises on model output, it reports the first problem instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ops.actions.formats.base import LONE_SURROGATE, MAX_OUTPUT_CHARS, REASONING_PARTS, ReasoningParts

_PART_TAG = re.compile(r"<(/?)(" + "|".join(REASONING_PARTS) + r")>")
_ENVELOPE_TAGS = ("<think>", "</think>", "<answer>", "</answer>")
MAX_PART_TAGS = 4 * len(REASONING_PARTS)  # a structured block has 8; past this many it is a flood, not an answer


@dataclass(frozen=True, slots=True)
class ReasoningSections:
    """The part blocks found in a `<think>` block, in order of appearance (each part's text
    stripped), and the first reason they are not exactly the four parts in order (None when
    they are)."""

    found: tuple[tuple[str, str], ...]
    problem: str | None

    @property
    def parts(self) -> ReasoningParts | None:
        """The four parts when the block is well formed, else None."""
        return None if self.problem else ReasoningParts(*(text for _, text in self.found))

    def first(self, name: str) -> str | None:
        """The text of the first complete `name` block, well formed or not (None if absent)."""
        return next((text for part, text in self.found if part == name), None)


@dataclass(frozen=True, slots=True)
class StructuredLayout:
    """What a response's markup holds: the `<think>` → `<answer>` envelope (None when right, else
    what is wrong with it) and the part blocks of its leading `<think>` block."""

    envelope_problem: str | None
    sections: ReasoningSections

    @property
    def ok(self) -> bool:
        return self.envelope_problem is None and self.sections.problem is None


def read_reasoning(thinking: str) -> ReasoningSections:
    """The part blocks of a `<think>` block's content and the first problem with them: a stray or
    unclosed tag, a part inside another, a missing, repeated, out-of-order or empty part, or
    other text between the parts."""
    found: list[tuple[str, str]] = []
    problems: list[str] = []
    open_name, open_end, last_end = None, 0, 0
    stray_text = False
    for count, tag in enumerate(_PART_TAG.finditer(thinking)):
        if count == MAX_PART_TAGS:
            return ReasoningSections(tuple(found), f"more than {MAX_PART_TAGS} part tags")
        closing, name = tag.group(1) == "/", tag.group(2)
        if open_name is None:
            if closing:
                problems.append(f"</{name}> without <{name}>")
                continue
            stray_text = stray_text or bool(thinking[last_end:tag.start()].strip())
            open_name, open_end = name, tag.end()
        elif closing and name == open_name:
            found.append((name, thinking[open_end:tag.start()].strip()))
            open_name, last_end = None, tag.end()
        else:  # the open part is abandoned; an opening tag starts the next one
            problems.append(f"<{tag.group(1)}{name}> inside <{open_name}>")
            open_name, open_end = (None, 0) if closing else (name, tag.end())
    if open_name is not None:
        problems.append(f"<{open_name}> is not closed")
    elif thinking[last_end:].strip():
        stray_text = True
    problems += _order_problems([name for name, _ in found])
    problems += [f"part {name} is empty" for name, text in found if not text]
    if stray_text:
        problems.append("text outside the four parts")
    return ReasoningSections(tuple(found), problems[0] if problems else None)


def _order_problems(names: list[str]) -> list[str]:
    missing = [p for p in REASONING_PARTS if p not in names]
    if missing:
        return [f"missing part {', '.join(missing)}"]
    repeated = [p for p in REASONING_PARTS if names.count(p) > 1]
    if repeated:
        return [f"part {', '.join(repeated)} repeated"]
    if tuple(names) != REASONING_PARTS:
        return [f"parts out of order: {', '.join(names)}"]
    return []


def read_envelope(text: str) -> tuple[str | None, str | None]:
    """The leading `<think>` block's content (None without one) and what is wrong with the envelope
    `<think>…</think><answer>…</answer>` (None when only whitespace surrounds the two blocks)."""
    start = len(text) - len(text.lstrip())
    if not text.startswith("<think>", start):
        return None, "the response does not start with <think>"
    end = text.find("</think>", start)
    if end < 0:
        return None, "<think> is not closed"
    thinking = text[start + len("<think>"):end]
    rest = text[end + len("</think>"):].lstrip()
    if not rest.startswith("<answer>"):
        return thinking, "no <answer> right after </think>"
    close = rest.find("</answer>")
    if close < 0:
        return thinking, "<answer> is not closed"
    if rest[close + len("</answer>"):].strip():
        return thinking, "text after </answer>"
    return thinking, None


def read_layout(text: object) -> StructuredLayout:
    """The envelope and parts of a response; text the parsers would refuse outright (not a string,
    longer than `MAX_OUTPUT_CHARS`, holding a lone surrogate) has neither."""
    refused = _refusal(text) if isinstance(text, str) else f"expected text, got {type(text).__name__}"
    if refused:
        return StructuredLayout(refused, ReasoningSections((), refused))
    thinking, envelope_problem = read_envelope(text)
    if thinking is None:
        return StructuredLayout(envelope_problem, ReasoningSections((), "no <think> block"))
    return StructuredLayout(envelope_problem, read_reasoning(thinking))


def _refusal(text: str) -> str | None:
    if len(text) > MAX_OUTPUT_CHARS:
        return f"output longer than {MAX_OUTPUT_CHARS} characters"
    if LONE_SURROGATE.search(text):
        return "the output holds a lone surrogate"
    return None


def render_reasoning(parts: ReasoningParts) -> str:
    """The `<think>` content for `parts` (each stripped). Raises ValueError for a part that is
    empty or holds one of the format's tags, which `read_reasoning` could not read back."""
    lines = []
    for name, text in zip(REASONING_PARTS, parts.texts(), strict=True):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"part {name} is empty")
        if _PART_TAG.search(text) or any(tag in text for tag in _ENVELOPE_TAGS):
            raise ValueError(f"part {name} holds a tag of the format: {text[:80]!r}")
        lines.append(f"<{name}>{text.strip()}</{name}>")
    return "\n" + "\n".join(lines) + "\n"
