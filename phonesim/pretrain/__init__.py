"""The pretraining world: apps and task templates that exist only to pretrain the embedded base.

A real vision-language model is pretrained on apps and tasks other than the ones it is later
adapted to. This package is that for the embedded base policy: collection apps of its own
(`phonesim.pretrain.worlds`, built by `phonesim.pretrain.collection`) with task families
(`phonesim.pretrain.families`) whose templates have split "pretrain". They live in a registry of
their own, apart from `phonesim.apps`: `load_apps()`, `all_templates()` and `templates()` — the
target app set of exploration, curriculum, rollouts and the benchmark — never hold them, and a
target phone never shows them. `phonesim.instantiate` builds a pretraining task on a phone with
the pretraining apps only (`phonesim.tasks.catalog_of`).

Apps are of several *kinds*, each a declarative spec with its app builder and task families (`KINDS`):
collection apps (`phonesim.pretrain.collection`), and the target's kinds of layouts under other names
(docs/base-ceiling.md, R8): timed-entry apps (`phonesim.pretrain.timed`), folders apps
(`phonesim.pretrain.folders`, R8c) and conversations apps (`phonesim.pretrain.conversations`, R8b).

The apps come on several *phones* (`PHONES`: name -> its apps, one launcher page each, as the
target's eleven apps come on one): the hand-written apps of every kind (`phonesim.pretrain.worlds`,
`phonesim.pretrain.timed_worlds`, `phonesim.pretrain.folder_worlds`, `phonesim.pretrain.conversation_worlds`),
and generated apps with invented words of each kind (`phonesim.pretrain.generated`,
`phonesim.pretrain.timed_generated`, `phonesim.pretrain.folder_generated`,
`phonesim.pretrain.conversation_generated`) in phones of ten. A pretraining task's phone holds its own phone's
apps (`phone_catalog`). `HELD_OUT_APPS` — five hand-written apps and the ten apps of the last phone of
each generated kind — are apps whose screens and tasks a pretraining recipe leaves out, so that their
tasks measure how a pretrained policy does on apps it has never seen.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, NamedTuple

from phonesim.app import App
from phonesim.apps import load_apps
from phonesim.pretrain.collection import CollectionSpec, build_app
from phonesim.pretrain.conversation_families import convo_templates_for
from phonesim.pretrain.conversation_generated import generated_convo_specs
from phonesim.pretrain.conversation_worlds import CONVO_HELD_OUT, CONVO_SPECS
from phonesim.pretrain.conversations import ConvoSpec, build_convo_app
from phonesim.pretrain.families import templates_for
from phonesim.pretrain.folder_families import folder_templates_for
from phonesim.pretrain.folder_generated import generated_folder_specs
from phonesim.pretrain.folder_worlds import FOLDER_HELD_OUT, FOLDER_SPECS
from phonesim.pretrain.folders import FolderSpec, build_folder_app
from phonesim.pretrain.generated import generated_specs, generated_words
from phonesim.pretrain.timed import TimedSpec, build_timed_app
from phonesim.pretrain.timed_families import timed_templates_for
from phonesim.pretrain.timed_generated import generated_timed_specs
from phonesim.pretrain.timed_worlds import TIMED_HELD_OUT, TIMED_SPECS
from phonesim.pretrain.worlds import HANDMADE_HELD_OUT, SPECS
from phonesim.task_template import TaskTemplate

GENERATED_APPS = 50
GENERATED_TIMED_APPS = 30
GENERATED_FOLDER_APPS = 30
GENERATED_CONVO_APPS = 30
APPS_PER_PHONE = 10


class Kind(NamedTuple):
    """One app kind: how a spec of it becomes an App, and its task templates."""

    build: Callable[[Any], App]
    templates: Callable[[Any], list[TaskTemplate]]


KINDS = {CollectionSpec: Kind(build_app, templates_for), TimedSpec: Kind(build_timed_app, timed_templates_for)}
KINDS[FolderSpec] = Kind(build_folder_app, folder_templates_for)
KINDS[ConvoSpec] = Kind(build_convo_app, convo_templates_for)


def _words(specs) -> set[str]:
    return {w.lower() for s in specs for text in (s.label, s.noun, *s.titles, *s.new_titles) for w in text.split()}


def _in_phones(prefix: str, specs: tuple) -> dict[str, tuple]:
    return {f"{prefix}{start // APPS_PER_PHONE + 1}": specs[start:start + APPS_PER_PHONE]
            for start in range(0, len(specs), APPS_PER_PHONE)}


@lru_cache(maxsize=1)
def _phones() -> dict[str, tuple[Any, ...]]:
    collections = generated_specs(GENERATED_APPS)
    timed = generated_timed_specs(GENERATED_TIMED_APPS,
                                  generated_words(GENERATED_APPS) | _words(SPECS + TIMED_SPECS + collections))
    phones = {"handmade": tuple(sorted(SPECS + TIMED_SPECS, key=lambda s: s.name))}
    phones = phones | _in_phones("generated", collections) | _in_phones("timed", timed)
    taken = generated_words(GENERATED_APPS) | _words(SPECS + TIMED_SPECS + collections + timed)
    folders = generated_folder_specs(GENERATED_FOLDER_APPS, taken | _words(FOLDER_SPECS))
    convo = generated_convo_specs(GENERATED_CONVO_APPS, taken | _words(FOLDER_SPECS + folders + CONVO_SPECS))
    return _joined(_joined(phones, "folders", FOLDER_SPECS, folders), "convo", CONVO_SPECS, convo)


def _joined(phones: dict[str, tuple], prefix: str, handwritten: tuple, generated: tuple) -> dict[str, tuple]:
    """A kind's apps added to the phones: the hand-written ones join the hand-written phone, the generated ones
    (none of whose invented words another app uses) come on phones of their own, `prefix`1, 2, ..."""
    handmade = tuple(sorted(phones["handmade"] + handwritten, key=lambda s: s.name))
    return phones | {"handmade": handmade} | _in_phones(prefix, generated)


PHONES = {phone: tuple(s.name for s in specs) for phone, specs in _phones().items()}
HELD_OUT_PHONES = ("generated5", "timed3", "folders3", "convo3")  # the last phone of each generated kind
HELD_OUT_APPS = (HANDMADE_HELD_OUT + TIMED_HELD_OUT + FOLDER_HELD_OUT + CONVO_HELD_OUT
                 + tuple(a for p in HELD_OUT_PHONES for a in PHONES[p]))


def pretrain_specs() -> dict[str, Any]:
    """name -> the spec of every pretraining app (of any kind: each has a name, label, noun, plural, titles
    and new titles)."""
    return {s.name: s for specs in _phones().values() for s in specs}


@lru_cache(maxsize=1)
def load_pretrain_apps() -> dict[str, App]:
    """name -> App of every pretraining app, phone by phone, templates attached. Raises when a name,
    label or package is also another app's (the two worlds share the phone's world cache), or a label
    repeats on a phone."""
    targets = load_apps().values()
    taken = {x.lower() for app in targets for x in (app.name, app.label, app.package)}
    apps: dict[str, App] = {}
    for phone, specs in _phones().items():
        labels = [s.label.lower() for s in specs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"pretraining phone {phone}: two apps share a label")
        for spec in specs:
            clash = [x for x in (spec.name, spec.label, spec.package) if x.lower() in taken]
            if clash or spec.name in apps:
                raise ValueError(f"pretraining app {spec.name!r}: {clash or [spec.name]} already names an app")
            kind = KINDS[type(spec)]
            app = kind.build(spec)
            app.templates = kind.templates(spec)
            apps[app.name] = app
    return apps


@lru_cache(maxsize=None)
def phone_catalog(app: str) -> dict[str, App]:
    """The apps of the pretraining phone that holds `app` (a pretraining task's phone has these)."""
    phone = next((p for p, names in PHONES.items() if app in names), None)
    if phone is None:
        raise KeyError(f"{app!r} is not a pretraining app")
    everything = load_pretrain_apps()
    return {name: everything[name] for name in PHONES[phone]}


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


__all__ = ["HELD_OUT_APPS", "KINDS", "PHONES", "load_pretrain_apps", "phone_catalog", "pretrain_specs",
           "pretrain_template_ids", "pretrain_templates", "trained_apps"]
