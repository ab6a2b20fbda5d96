"""Seeded stand-in policies for rollout tests: real prompts and answer formats (the elements style, and the
structured-reasoning style), random clicks.

They replace the model only; prompts, parsing, the environment and the critic are the real ones.
"""

from __future__ import annotations

import random
import time
from typing import Sequence

from ops.agent.episode import PolicyOutput, PolicyRequest
from ops.agent.policy import PromptedPolicy
from ops.actions import Action, ActionType, ReasoningParts, render_structured
from ops.actions.formats import label_echo
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import element_label


class RandomClickPolicy(PromptedPolicy):
    def __init__(self, seed: int = 0, stop_prob: float = 0.15, delay_s: float = 0.0, version: str = "random"):
        super().__init__("elements", version)
        self.rng = random.Random(seed)
        self.stop_prob = stop_prob
        self.delay_s = delay_s

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        time.sleep(self.delay_s)
        out = []
        for r in requests:
            clickable = [e for e in r.observation.elements if e.get("clickable")]
            if not clickable or self.rng.random() < self.stop_prob:
                action = Action(type=ActionType.TERMINATE, status="success")
            else:
                action = Action(type=ActionType.CLICK, element=self.rng.choice(clickable)["index"])
            labels = [element_label(e) for e in r.observation.elements]
            out.append(PolicyOutput(label_echo.render_target(action, labels),
                                    messages_to_json(self.prompt_for(r)), 0.0))
        return out


class StructuredClickPolicy(PromptedPolicy):
    """The structured-reasoning style (mobilewizard) with random clicks at element centres: four
    parts naming the step, the element and what the memory showed; every `invalid_every`-th output
    (counted over all requests, from 1) is free text that `parse_structured` refuses."""

    def __init__(self, seed: int = 0, stop_prob: float = 0.15, invalid_every: int = 0, version: str = "structured"):
        super().__init__("mobilewizard", version)
        self.rng = random.Random(seed)
        self.stop_prob = stop_prob
        self.invalid_every = invalid_every
        self.requests = 0
        self.memories: list[str] = []  # the memory each request carried, as rendered

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        out = []
        for r in requests:
            self.requests += 1
            self.memories.append(r.memory.render())
            prompt = messages_to_json(self.prompt_for(r))
            if self.invalid_every and self.requests % self.invalid_every == 0:
                out.append(PolicyOutput("I will tap the first row.", prompt, 0.0))
                continue
            clickable = [e for e in r.observation.elements if e.get("clickable")]
            if not clickable or self.rng.random() < self.stop_prob:
                action, target = Action(type=ActionType.TERMINATE, status="success"), "the task"
            else:
                element = self.rng.choice(clickable)
                x0, y0, x1, y1 = element["grid"]
                action, target = Action(type=ActionType.CLICK, point=((x0 + x1) // 2, (y0 + y1) // 2)), \
                    element_label(element)
            parts = ReasoningParts(f"Request {self.requests} checks the last step.",
                                   f"The {r.observation.screen} screen is open.",
                                   f"Work on {r.observation.screen}.", f"Click {target}.")
            out.append(PolicyOutput(render_structured(action, parts), prompt, 0.0))
        return out
