"""Task instances, the template registry and the state judge.

A template (MobileGym §4.2; `phonesim.task_template`) is a small declarative unit in an app's
`tasks.py`. `instantiate(template_id, seed)` turns one into a `TaskInstance` deterministically.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

from phonesim.answers import AnswerSpec, match_answer
from phonesim.app import App
from phonesim.apps import load_apps
from phonesim.phone import DEFAULT_SIZE, Phone
from phonesim.pretrain import phone_catalog, pretrain_templates
from phonesim.state import diff_paths, path_matches
from phonesim.task_template import PRETRAIN_SPLIT, Params, TaskTemplate


@dataclass(frozen=True)
class JudgeResult:
    success: bool  # every goal check (and the typed answer) passed
    progress: float  # fraction of checks passed
    checks: tuple[tuple[str, bool], ...]
    side_effects: tuple[str, ...]  # changed data paths outside the expected changes
    answer_ok: bool | None = None  # None for operate tasks
    answer_reason: str = ""

    @property
    def clean(self) -> bool:
        return not self.side_effects


@dataclass
class TaskInstance:
    template: TaskTemplate
    seed: int
    world_seed: int
    params: Params
    instruction: str
    answer_spec: AnswerSpec | None
    initial: dict[str, Any] = field(repr=False)  # runtime state after setup
    _view: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.template.id}#{self.seed}"

    @property
    def key(self) -> str:
        """What makes two instances the same task: template, params and initial state (instances that
        differ only in the instruction's paraphrase are one task)."""
        content = json.dumps([self.template.id, self.params, self.initial], sort_keys=True, default=str)
        return hashlib.sha256(content.encode()).hexdigest()

    @property
    def step_budget(self) -> int:
        return self.template.step_budget

    @property
    def difficulty(self) -> int:
        return self.template.difficulty

    @property
    def split(self) -> str:
        return self.template.split

    @property
    def apps(self) -> tuple[str, ...]:
        return self.template.apps

    def make_phone(self, size: tuple[int, int] | None = None) -> Phone:
        """A phone in this task's initial state (with the apps of the task's world)."""
        phone = Phone(self.world_seed, size or DEFAULT_SIZE, catalog=catalog_of(self.template))
        phone.restore(self.initial)
        return phone

    def judge(self, phone: Phone, answer: str | None = None) -> JudgeResult:
        """Deterministic verdict from state. `answer` defaults to the phone's last `answer` action."""
        t = self.template
        checks = list(t.checks(phone, self.params)) if t.checks else []
        answer_ok, why = None, ""
        if self.answer_spec is not None:
            given = answer if answer is not None else phone.answer
            answer_ok, why = match_answer(self.answer_spec, given)
            checks += [("answer_submitted", given is not None), ("answer_correct", answer_ok)]
        expected = t.expected(self.params)
        side: tuple[str, ...] = ()
        if phone.state["data"] != self.initial["data"]:
            side = tuple(p for p in diff_paths(self._initial_view(), phone.logical_state())
                         if not path_matches(p, expected))
        passed = sum(1 for _, ok in checks if ok)
        return JudgeResult(passed == len(checks), passed / len(checks) if checks else 1.0, tuple(checks), side,
                           answer_ok, why)

    def _initial_view(self) -> dict[str, Any]:
        if self._view is None:
            self._view = self.make_phone().logical_state()
        return self._view

    def evidence(self) -> list[str]:
        """Texts whose presence on screen justifies submitting the answer (solver use)."""
        if self.answer_spec is None:
            return []
        if self.template.evidence is not None:
            return self.template.evidence(self.params, self.answer_spec)
        gold = self.answer_spec.gold
        return [f"{gold:g}" if isinstance(gold, float) else str(gold)]

    def evidence_shown(self, elements: Iterable[Mapping[str, Any]]) -> bool:
        """Whether a screen's elements (dicts with `text` and `desc`) show one of this task's evidence
        texts. A substring test, so approximate: a short gold such as "5" can also sit inside an
        unrelated text ("Battery 95%")."""
        evidence = self.evidence()
        return any(ev in f"{e.get('text', '')}\n{e.get('desc', '')}" for e in elements for ev in evidence)

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.id, "template": self.template.id, "seed": self.seed, "world_seed": self.world_seed,
                "instruction": self.instruction, "params": self.params, "step_budget": self.step_budget,
                "difficulty": self.difficulty, "split": self.split, "objective": self.template.objective,
                "composition": self.template.composition, "apps": list(self.apps),
                "answer": self.answer_spec.to_dict() if self.answer_spec else None}


def catalog_of(template: TaskTemplate) -> dict[str, App]:
    """The apps a template's phones have: its pretraining phone's for a pretraining template, else
    the target apps."""
    return phone_catalog(template.apps[0]) if template.split == PRETRAIN_SPLIT else load_apps()


def world_phone(template_id: str | None, world_seed: int = 0, size: tuple[int, int] | None = None) -> Phone:
    """A fresh phone with the apps of `template_id`'s world: the pretraining apps for a pretraining
    template, else (a target template, or a task of no template) the target apps. Restore a stored
    state of that task into it."""
    template = pretrain_templates().get(template_id) if template_id else None
    return Phone(world_seed, size or DEFAULT_SIZE, catalog=catalog_of(template) if template else None)


@lru_cache(maxsize=1)
def all_templates() -> dict[str, TaskTemplate]:
    """Every target template by id (collected from each app package's TEMPLATES): the train, test and
    ood splits. The pretraining world's templates are not among them (`phonesim.pretrain`)."""
    out: dict[str, TaskTemplate] = {}
    apps = load_apps()
    for app in apps.values():
        for t in app.templates:
            if t.id in out:
                raise ValueError(f"duplicate task template id {t.id}")
            missing = [a for a in t.apps if a not in apps]
            if missing:
                raise ValueError(f"task template {t.id} uses unregistered apps {missing}")
            out[t.id] = t
    return dict(sorted(out.items()))


def templates(split: str | None = None, app: str | None = None) -> list[TaskTemplate]:
    return [t for t in all_templates().values() if (split is None or t.split == split)
            and (app is None or app in t.apps)]


def instantiate(template_id: str, seed: int, world_seed: int = 0) -> TaskInstance:
    """Sample params, set up state and phrase the instruction, all determined by the seeds."""
    tmpl = all_templates().get(template_id) or pretrain_templates().get(template_id)
    if tmpl is None:
        raise KeyError(f"unknown task template {template_id!r}")
    rng = random.Random(f"{template_id}:{seed}")
    phone = Phone(world_seed, catalog=catalog_of(tmpl))
    params = tmpl.sample(rng, phone)
    if tmpl.setup is not None:
        tmpl.setup(phone, params)
    spec = tmpl.answer(phone, params) if tmpl.answer else None
    instruction = rng.choice(tmpl.instructions).format(**params)
    if spec is not None and spec.hint:
        instruction += f" Answer with {spec.hint}."
    return TaskInstance(tmpl, seed, world_seed, params, instruction, spec, phone.snapshot())
