"""A scripted stand-in for the curriculum / critic LLM, served by `tests.support.openai_server` (no
language model ships offline in a form the project can run: docs/devices.md). It answers every prompt
the loop sends with well-formed JSON made from the prompt's own text:

- curriculum (MobileForge prompt G.1): from a trajectory's step summaries (`action 'x' on app/screen ->
  app/screen`), tasks that open the app and reach the screens the trajectory reached; it records what
  each instruction asks (`goals`), so a test can judge the attempts against the served simulator.
- critic: step descriptions from the action logs; a decision that trusts the agent (success iff the
  last action declares success): the naive judge whose agreement the test measures; the corrective hint
  of prompt 4.
- fresh RFT variants: the task reworded.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass

from ops.curriculum.prompts import CURRICULUM_SYSTEM
from ops.judging.critic.prompts import CORRECTIVE_HINT_SYSTEM, FINAL_DECISION_SYSTEM, STEP_DESCRIPTION_SYSTEM
from tests.support.openai_server import RecordedRequest, Reply

_TRANSITION = re.compile(r"^\d+\. .* on (?P<app>[^/\s]+)/(?P<src>\S+) -> (?P<dst_app>[^/\s]+)/(?P<dst>\S+)$", re.M)
_STEP = re.compile(r"^Step (\d+): \[(\w+)\] (.*)$", re.M)
HINT = {"key_mistake": "stopped before the screen the task names", "what_to_avoid": ["declaring success early"],
        "suggested_approach": ["open the screen the task names, then finish"],
        "important_insights": ["the task names its screen"], "hint_summary": "Reach the named screen, then finish."}


@dataclass(frozen=True)
class Goal:
    """What a mined instruction asks: `app` in front, on `screen` when one is named."""

    app: str
    screen: str | None
    kind: str  # the task type, as the curriculum labels it (its core functionality)


def _text(request: RecordedRequest) -> str:
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


class StandInLLM:
    """The server behaviour; `goals` maps each instruction it wrote to what it asks."""

    def __init__(self) -> None:
        self.goals: dict[str, Goal] = {}
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        system = request.messages[0]["content"] if request.messages[0]["role"] == "system" else ""
        kind = {CURRICULUM_SYSTEM: "curriculum", STEP_DESCRIPTION_SYSTEM: "describe", FINAL_DECISION_SYSTEM: "decide",
                CORRECTIVE_HINT_SYSTEM: "hint"}.get(system, "variants")
        with self._lock:
            self.calls[kind] += 1
        return Reply(json.dumps(getattr(self, f"_{kind}")(_text(request))))

    def _curriculum(self, text: str) -> dict:
        app = re.search(r"^App name: (\S+)", text, re.M).group(1)
        screens = [m.group("dst") for m in _TRANSITION.finditer(text) if m.group("dst_app") == app]
        tasks = [(f"Open the {app} app.", Goal(app, None, "app launch"), 3)]
        for number, screen in enumerate(dict.fromkeys(reversed(screens))):
            tasks.append((f"In {app}, go to the {screen} screen and stop there.", Goal(app, screen, "screen navigation"),
                          4 + number))
        tasks = tasks[:3]
        while len(tasks) < 3:  # prompt G.1 asks for three at least
            tasks.append((f"Open {app} and return to its first screen (variant {len(tasks)}).",
                          Goal(app, None, "app launch"), 4))
        with self._lock:
            for instruction, goal, _ in tasks:
                self.goals[instruction] = goal
        return {"evaluation": {"task_reasonable": True, "task_completed": True, "confidence_score": 0.8,
                               "step_quality_analysis": {"total_steps": 1, "reasonable_steps": 1,
                                                         "trajectory_quality_score": 0.8}},
                "generated_tasks": [{"task_id": f"t{i}", "instruction": instruction, "step_budget": budget,
                                     "core_functionality": goal.kind,
                                     "variation_type": "simplification" if goal.screen is None else "step_progression",
                                     "prerequisites": ""}
                                    for i, (instruction, goal, budget) in enumerate(tasks, start=1)]}

    def _describe(self, text: str) -> dict:
        detail = re.search(r"- Action detail: (.*)", text)
        return {"action_description": f"did {detail.group(1) if detail else 'an action'}",
                "ui_description": "an app screen"}

    def _decide(self, text: str) -> dict:
        steps = _STEP.findall(text)
        last_type, last_detail = (steps[-1][1], steps[-1][2]) if steps else ("", "")
        success = last_type == "terminate" and '"success"' in last_detail
        labels = {str(int(n)): {"reasonableness": "reasonable" if success or int(n) < len(steps) else "unreasonable",
                                "explanation": "trusted"} for n, _, _ in steps}
        return {"decision": int(success), "reason": "the agent declared success" if success else "no success declared",
                "failure_step": None if success or not steps else len(steps), "task_feasible": True,
                "step_analysis": labels}

    def _hint(self, text: str) -> dict:
        return HINT

    def _variants(self, text: str) -> dict:
        task = re.search(r"^Task: (.*)$", text, re.M).group(1)
        written = [f"Once more: {task}", f"{task} Take the shortest way."]
        with self._lock:
            for instruction in written:  # a variant asks what its task asked
                if task in self.goals:
                    self.goals[instruction] = self.goals[task]
        return {"variants": [{"instruction": instruction, "step_budget": 5} for instruction in written]}
