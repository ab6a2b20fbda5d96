"""The embedded base policy's prompt and answer format (no torch: rollouts can use it too).

The policy sees one user message: the screenshot, then the element list (one row per
element, `<index> <label>`), then the instruction last. It answers with the compact canonical
action JSON, e.g. `{"type":"click","args":{"element":3}}`. Rollout prompts for a policy
pretrained by `training.base_pretrain` must be built with these functions, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ops.actions.model import Action, ActionError, ParseFailure, ParseResult

TASK_PREFIX = "Task: "


def format_element_rows(labels: Sequence[str]) -> str:
    """One `<index> <label>` row per element; newlines inside labels become spaces."""
    return "\n".join(f"{i} {' '.join(label.split())}" for i, label in enumerate(labels))


def policy_prompt_text(labels: Sequence[str], instruction: str) -> str:
    """The text part of the user message: element rows, then the instruction."""
    rows = format_element_rows(labels)
    task = TASK_PREFIX + " ".join(instruction.split())
    return f"{rows}\n{task}" if rows else task


def policy_messages(labels: Sequence[str], instruction: str, *, with_image: bool = True) -> list[dict]:
    """Chat messages (HF/TRL form, image placeholder first) for one policy step."""
    content: list[dict] = [{"type": "image"}] if with_image else []
    content.append({"type": "text", "text": policy_prompt_text(labels, instruction)})
    return [{"role": "user", "content": content}]


def render_action(action: Action) -> str:
    """The compact canonical JSON the policy is trained to emit."""
    return json.dumps(action.to_dict(), ensure_ascii=False, separators=(",", ":"))


def parse_policy_output(text: str) -> ParseResult:
    """Parse the policy's answer; anything that is not one canonical action is a ParseFailure."""
    try:
        return Action.from_json(text.strip())
    except ActionError as exc:
        return ParseFailure(reason=str(exc), raw=text, format="canonical_json")
