"""The task template model: what one parameterized task family declares (instruction templates,
a parameter sampler, an optional setup, goal checks or an answer, expected changes, a budget, a
difficulty). Apps declare their templates with it; `phonesim.tasks` discovers and instantiates them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from phonesim.answers import AnswerSpec


class PhoneView(Protocol):
    """What a task template reads and sets of a phone (`phonesim.phone.Phone` is one): its state,
    each app's data and each app's generated world. A protocol, so templates, which the app
    registry loads, do not import the phone, which loads the registry."""

    state: dict[str, Any]

    def data(self, app: str) -> dict[str, Any]: ...

    def world(self, app: str) -> dict[str, Any]: ...

OBJECTIVES = ("operate", "query", "hybrid")
COMPOSITIONS = ("atomic", "sequential", "deep_dive", "transfer")
# train: the curriculum may mine it; test: held out from every stage; ood: held out too, and unlike
# anything in train (cross-app hand-offs, app functions no train template exercises), for the
# out-of-domain column of the benchmark (as MobileForge reports MobileWorld beside AndroidWorld);
# pretrain: only the pretraining world's templates (`phonesim.pretrain`), over apps of their own that
# no target phone has, for pretraining the embedded base policy (never a target task of any stage)
TARGET_SPLITS = ("train", "test", "ood")
PRETRAIN_SPLIT = "pretrain"
SPLITS = (*TARGET_SPLITS, PRETRAIN_SPLIT)

Params = dict[str, Any]
Sampler = Callable[[random.Random, PhoneView], Params]


def extend(base: Sampler, add: Callable[[random.Random, PhoneView, Params], Params]) -> Sampler:
    """A sampler that draws `base`'s params, then adds those `add(rng, phone, params)` returns
    (drawn from the same rng afterwards, so instances stay deterministic)."""
    def sample(rng: random.Random, phone: PhoneView) -> Params:
        params = base(rng, phone)
        params.update(add(rng, phone, params))
        return params
    return sample


def _nothing(params: Params) -> list:
    return []


@dataclass(frozen=True)
class TaskTemplate:
    id: str  # "<app>.<name>"
    apps: tuple[str, ...]
    objective: str
    composition: str
    difficulty: int  # 1 (easy) .. 4 (very hard), MobileGym §4.4 strata
    split: str
    step_budget: int
    instructions: tuple[str, ...]  # str.format templates over params (paraphrases)
    sample: Callable[[random.Random, PhoneView], Params]
    checks: Callable[[PhoneView, Params], list[tuple[str, bool]]] | None = None  # goal sub-checks
    answer: Callable[[PhoneView, Params], AnswerSpec] | None = None  # gold read from the initial state
    evidence: Callable[[Params, AnswerSpec], list[str]] | None = None  # on-screen texts that justify answering
    expected: Callable[[Params], list[str]] = _nothing  # data paths allowed to change (fnmatch)
    setup: Callable[[PhoneView, Params], None] | None = None
    hints: Callable[[Params], list[str | int]] = _nothing  # texts to type / slider values, for the solver
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problems = []
        if self.objective not in OBJECTIVES:
            problems.append(f"objective {self.objective!r} not in {OBJECTIVES}")
        if self.composition not in COMPOSITIONS:
            problems.append(f"composition {self.composition!r} not in {COMPOSITIONS}")
        if self.split not in SPLITS:
            problems.append(f"split {self.split!r} not in {SPLITS}")
        if not 1 <= self.difficulty <= 4:
            problems.append(f"difficulty {self.difficulty} not in 1..4")
        if not self.instructions:
            problems.append("no instructions")
        if self.objective in ("query", "hybrid") and self.answer is None:
            problems.append(f"{self.objective} template needs an answer")
        if self.objective in ("operate", "hybrid") and self.checks is None:
            problems.append(f"{self.objective} template needs checks")
        if problems:
            raise ValueError(f"task template {self.id}: " + "; ".join(problems))

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "apps": list(self.apps), "objective": self.objective,
                "composition": self.composition, "difficulty": self.difficulty, "split": self.split,
                "step_budget": self.step_budget, "instructions": list(self.instructions), "tags": list(self.tags)}
