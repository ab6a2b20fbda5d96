"""Synthetic attempts and a scripted critic VLM for the LLM critic tests.

The VLM is the real local OpenAI-compatible server (tests/support/openai_server.py); only its
answers are scripted, per critic stage, recognised by the system prompt of each request.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable

from PIL import Image

from ops.agent.episode import AttemptRecord, GroundTruth, Hint, StepRecord, TaskSpec
from ops.judging.critic.prompts import CORRECTIVE_HINT_SYSTEM, FINAL_DECISION_SYSTEM, STEP_DESCRIPTION_SYSTEM
from tests.support.images import solid_png
from tests.support.openai_server import RecordedRequest, Reply

SCREEN_W, SCREEN_H = 100, 200  # synthetic screenshots; panels scale them to 800 px high (x4)
STEP_COLORS = [(30, 120, 200), (40, 160, 60), (200, 170, 30), (120, 60, 160), (90, 90, 90)]
ELEMENTS = [
    {"text": "Network & internet", "grid": [0, 100, 1000, 200]},
    {"text": "Display", "grid": [0, 600, 1000, 700]},
]

CLICK_POINT = {"type": "click", "args": {"point": [500, 250]}}
CLICK_ELEMENT = {"type": "click", "args": {"element": 1}}
SWIPE_UP = {"type": "swipe", "args": {"direction": "up"}}
TERMINATE = {"type": "terminate", "args": {"status": "success"}}

HINT = {
    "key_mistake": "opened Display instead of Network",
    "what_to_avoid": ["tapping Display"],
    "suggested_approach": ["tap Network & internet first"],
    "important_insights": ["Wi-Fi lives under Network & internet"],
    "hint_summary": "Go to Network & internet, not Display.",
}


def make_step(t: int, action: dict | None, raw_output: str = "", parse_error: str | None = None) -> StepRecord:
    return StepRecord(
        step=t, screenshot_png=solid_png(SCREEN_W, SCREEN_H, STEP_COLORS[t]), elements=ELEMENTS, a11y=None,
        app="settings", screen=f"screen_{t}", prompt='[{"role": "user", "content": "act"}]',
        raw_output=raw_output or json.dumps(action), action=action, parse_error=parse_error,
        conclusion=f"conclusion {t}", latency_s=0.01, env_ok=action is not None,
        env_reason=None if action is not None else f"invalid action: {parse_error}",
        state=json.dumps({"screen": t}),
    )


def make_attempt(actions: list[dict | None], task_id: str = "t1", attempt: int = 1,
                 instruction: str = "Turn on Wi-Fi") -> AttemptRecord:
    """An attempt whose step t shows a solid screen of STEP_COLORS[t]; None is an invalid output."""
    steps = [make_step(t, a) if a is not None else make_step(t, None, "I think I should tap... ", "no action found")
             for t, a in enumerate(actions)]
    return AttemptRecord(
        task=TaskSpec(task_id=task_id, instruction=instruction, step_budget=8, app="settings"),
        attempt=attempt, policy_version="p0",
        hints=[Hint(1, "m", ["a"], ["b"], ["c"], "s")] if attempt > 1 else [],
        steps=steps, end_reason="terminated", answer=None, final_state=json.dumps({"screen": "end"}),
        ground_truth=GroundTruth(success=True, progress=1.0, false_complete=False, side_effects=0, overdue=False),
    )


def decision_json(decision: int, labels: dict[int, bool], failure_step: int | None = None) -> str:
    """A prompt-3 answer; `labels` maps 1-based step numbers to reasonable/unreasonable."""
    return json.dumps({
        "decision": decision,
        "reason": "the Wi-Fi toggle is on" if decision else "Wi-Fi is still off",
        "failure_step": failure_step,
        "task_feasible": True,
        "task_feasible_reason": "the setting exists",
        "task_barriers": [],
        "step_analysis": {
            str(k): {"reasonableness": "reasonable" if ok else "unreasonable", "explanation": f"step {k} rationale"}
            for k, ok in labels.items()
        },
    })


def request_text(request: RecordedRequest) -> str:
    """The text of the first user message."""
    content = request.messages[1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def action_detail(request: RecordedRequest) -> str:
    return re.search(r"- Action detail: (.*)", request_text(request)).group(1)


def decode_image(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,"), url[:40]
    data = base64.b64decode(url.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(data)).convert("RGB")


_STAGES = {STEP_DESCRIPTION_SYSTEM: "describe", FINAL_DECISION_SYSTEM: "decide", CORRECTIVE_HINT_SYSTEM: "hint"}


class CriticScript:
    """Server behaviour answering each critic stage from its own script.

    `describe(request)` answers prompt 2 (default: echo the action detail); the n-th prompt-3
    and prompt-4 requests get `decide[n]` / `hint[n]` (the last entry repeats), or the reply
    of `decide(request)` when `decide` is a function.
    Requests are kept per stage in arrival order.
    """

    def __init__(self, decide: list[str] | Callable[[RecordedRequest], Reply], hint: list[str] | None = None,
                 describe: Callable[[RecordedRequest], Reply] | None = None) -> None:
        self.scripts = {"decide": decide, "hint": hint or [json.dumps(HINT)]}
        self.describe = describe or (lambda r: Reply(json.dumps(
            {"action_description": f"did {action_detail(r)}", "ui_description": "a settings list"})))
        self.requests: dict[str, list[RecordedRequest]] = defaultdict(list)
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        stage = _STAGES[request.messages[0]["content"]]
        with self._lock:
            self.requests[stage].append(request)
            n = len(self.requests[stage]) - 1
        if stage == "describe":
            return self.describe(request)
        script = self.scripts[stage]
        if callable(script):
            return script(request)
        return Reply(script[min(n, len(script) - 1)])
