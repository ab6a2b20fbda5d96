"""The pretraining world: apps and task templates that exist only to pretrain the embedded base.

A real vision-language model is pretrained on apps and tasks other than the ones it is later
adapted to. This package is that for the embedded base policy: collection apps of its own
(`phonesim.pretrain.worlds`, built by `phonesim.pretrain.collection`) with task families
(`phonesim.pretrain.families`) whose templates have split "pretrain". They live in a registry of
their own, apart from `phonesim.apps`: `load_apps()`, `all_templates()` and `templates()` — the
target app set of exploration, curriculum, rollouts and the benchmark — never hold them, and a
target phone never shows them. `phonesim.instantiate` builds a pretraining task on a phone with
the pretraining apps only (`phonesim.tasks.catalog_of`).

`HELD_OUT_APPS` are pretraining apps whose screens and tasks a pretraining recipe leaves out, so
that their tasks measure how a pretrained policy does on apps it has never seen.
"""

from __future__ import annotations

from functools import lru_cache

from phonesim.app import App
from phonesim.apps import load_apps
from phonesim.pretrain.collection import build_app
from phonesim.pretrain.families import templates_for
from phonesim.pretrain.worlds import HELD_OUT_APPS, SPECS
from phonesim.task_template import TaskTemplate


@lru_cache(maxsize=1)
def load_pretrain_apps() -> dict[str, App]:
    """name -> App of every pretraining app, in name order, templates attached. Raises when a
    name, label or package is also a target app's (the two worlds share the phone's world cache)."""
    targets = load_apps().values()
    taken = {x.lower() for app in targets for x in (app.name, app.label, app.package)}
    apps: dict[str, App] = {}
    for spec in sorted(SPECS, key=lambda s: s.name):
        clash = [x for x in (spec.name, spec.label, spec.package) if x.lower() in taken]
        if clash or spec.name in apps:
            raise ValueError(f"pretraining app {spec.name!r}: {clash or [spec.name]} already names an app")
        app = build_app(spec)
        app.templates = templates_for(spec)
        apps[app.name] = app
    unknown = set(HELD_OUT_APPS) - set(apps)
    if unknown:
        raise ValueError(f"held-out pretraining apps {sorted(unknown)} are not pretraining apps")
    return apps


@lru_cache(maxsize=1)
def pretrain_templates() -> dict[str, TaskTemplate]:
    """Every pretraining template by id."""
    return {t.id: t for app in load_pretrain_apps().values() for t in app.templates}


def pretrain_template_ids(held_out: bool | None = None) -> list[str]:
    """Pretraining template ids: all (None), those of the held-out apps (True) or of the others (False)."""
    return [tid for tid, t in pretrain_templates().items()
            if held_out is None or (t.apps[0] in HELD_OUT_APPS) == held_out]


def trained_apps() -> list[str]:
    """The pretraining apps a recipe trains on (every one but the held-out apps)."""
    return [name for name in load_pretrain_apps() if name not in HELD_OUT_APPS]


__all__ = ["HELD_OUT_APPS", "load_pretrain_apps", "pretrain_template_ids", "pretrain_templates", "trained_apps"]
