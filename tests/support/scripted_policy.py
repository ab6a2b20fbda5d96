"""A seeded stand-in policy for rollout tests: real prompts and answer format (elements style), random clicks.

It replaces the model only; prompts, parsing, the environment and the critic are the real ones.
"""

from __future__ import annotations

import random
import time
from typing import Sequence

from ops.episode import PolicyOutput, PolicyRequest
from ops.policy import PromptedPolicy
from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.prompts import element_label, messages_to_json


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
