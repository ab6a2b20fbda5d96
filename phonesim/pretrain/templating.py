"""What every pretraining app kind's task families share: one app's templates (split "pretrain",
tagged "pretrain"), reads of its records through a `Lookup`, the page the phone shows, the data paths a
task may change. `phonesim.pretrain.families` (collection apps) and `phonesim.pretrain.timed_families`
(timed-entry apps) build their templates on it.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.records import Lookup
from phonesim.task_template import PRETRAIN_SPLIT, Params, TaskTemplate


def first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


class AppFamily:
    """Template helpers for one pretraining app named `name` whose records `items` reads."""

    def __init__(self, name: str, items: Lookup, id_key: str):
        self.name, self.items, self.id_key = name, items, id_key

    def pick(self, rng: random.Random, phone: Any) -> Params:
        """A record drawn from the app's records: its id and title."""
        rec = rng.choice(self.items.records(phone))
        return {self.id_key: rec["id"], "title": rec["title"]}

    def on_page(self, phone: Any, screen: str, **params: Any) -> bool:
        """Whether the app is in front showing `screen` with these page parameters."""
        page = phone.top_page(self.name)
        return (phone.current_app == self.name and page is not None and page["screen"] == screen
                and all(page["params"].get(k) == v for k, v in params.items()))

    def path(self, p: Params, key: str = "") -> str:
        """The judge's data path of the task's record (or of one of its fields)."""
        return f"{self.name}.items.{p[self.id_key]}" + (f".{key}" if key else "")

    def set_field(self, key: str, value: Any) -> Callable[[Any, Params], None]:
        """A setup giving the task's record `value` in field `key`."""
        return lambda phone, p: self.items.edit(phone, p[self.id_key], **{key: value})

    def template(self, family: str, *, objective: str, difficulty: int, budget: int, instructions: tuple[str, ...],
                 sample, composition: str = "sequential", **kwargs: Any) -> TaskTemplate:
        return TaskTemplate(id=f"{self.name}.{family}", apps=(self.name,), objective=objective,
                            composition=composition, difficulty=difficulty, split=PRETRAIN_SPLIT, step_budget=budget,
                            instructions=instructions, sample=sample, tags=("pretrain",), **kwargs)
