"""Verbatim-copy samples for the world recipe: rows the prompt names, on screens that cannot be memorised.

R2 (docs/base-ceiling.md): a base pretrained on the world memorised the launchers of its five phones
(a fixed app set in a fixed order) and did not learn to copy the row a prompt names, so on a held-out
phone it clicked rows of the phones it knew, even against a `Hint:` line. Here copying is the only way
to fit the data:

- **launcher copies**: a launcher of 8–12 invented app labels (words as `phonesim.pretrain.generated`
  makes them, never a pretraining app's label, a target app's name or a word of a held-out app) in
  random order, drawn afresh for every sample and observed on a phone exactly as a rollout observes
  its launcher (`launcher_screen`: stand-in apps that only show their icon). The instruction is one of
  the world's: an episode's instruction that names its app, with the app's label replaced by the
  drawn one; "Open X"; or any episode's instruction with the critic's hint about this click (the
  prompt builder marks the row and writes `Hint: X`). The target: click X.
- **in-app copies**: the world's episode steps off the launcher whose clicked row the instruction
  names verbatim, or any of their clicks with the critic's hint about it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ops.actions import Action, ActionType
from phonesim.app import App, Screen
from phonesim.apps import load_apps
from phonesim.phone import Phone
from phonesim.pretrain import HELD_OUT_APPS, load_pretrain_apps, pretrain_specs
from phonesim.pretrain.generated import _Words, invented_app
from phonesim.system import LAUNCHER
from phonesim.widgets import Page
from training.base.grounding_data import GroundingSample, SampleFn
from training.base.sim_grounding import SimScreen, sim_screen
from training.base.world_episodes import WorldEpisode, _hint

LAUNCHER_APPS = (8, 12)  # apps on a drawn launcher (one page holds 16)
LAUNCHER_PART = 0.5  # of the copy samples, those on drawn launchers (the rest: in-app steps)
WORLD_SEEDS = 3  # the phone's world seed sets the launcher's clock and date
OPEN_FORMS = ("Open {app}", "Open {app}.")
LAUNCHER_FORMS = {"launcher_named": 0.4, "launcher_open": 0.2, "launcher_hinted": 0.4}


def forbidden_labels() -> frozenset[str]:
    """What a drawn label must not be (lower case): a pretraining app's name or label (its instructions
    are the ones relabelled), a target app's, or any word of a held-out app (its label, noun, titles)."""
    taken = {x for app in (*load_pretrain_apps().values(), *load_apps().values()) for x in (app.name, app.label)}
    held_out = [spec for name, spec in pretrain_specs().items() if name in HELD_OUT_APPS]
    for spec in held_out:
        taken |= {spec.label, spec.noun, spec.plural, *(w for title in spec.titles + spec.new_titles
                                                        for w in title.split())}
    return frozenset(x.lower() for x in taken)


def invented_labels(rng: random.Random, n: int, forbidden: Collection[str]) -> list[str]:
    """`n` distinct app labels in the generated apps' three forms ("Dezams", "Dezamhub", "Zimtrak"),
    none of them in `forbidden` (lower case)."""
    words, labels = _Words(rng), []
    while len(labels) < n:
        _, label = invented_app(rng, words)
        if label.lower() not in forbidden and label not in labels:
            labels.append(label)
    return labels


def _stand_in(slot: int, label: str) -> App:
    """An app that only shows its launcher icon. Slot names repeat from launcher to launcher, so the
    phone's caches (keyed by app names) stay small however many labels are drawn."""
    home = Screen("home", lambda ctx: Page(title=label, rows=[]), doc=label)
    return App(name=f"launcher_slot{slot:02d}", label=label, package=f"org.pretrain.slot{slot:02d}", color="#455a64",
               glyph="info", home="home", screens={"home": home}, transitions={}, make_world=lambda seed: {},
               initial_data=lambda world: {})


def launcher_screen(labels: Sequence[str], world_seed: int) -> SimScreen:
    """The launcher of a phone whose apps carry `labels`, in this order, as the policy sees it."""
    catalog = {app.name: app for app in (_stand_in(slot, label) for slot, label in enumerate(labels))}
    return sim_screen(Phone(world_seed=world_seed, catalog=catalog).observe())


@dataclass(frozen=True, slots=True)
class _Instruction:
    """An episode's instruction cut where it names its app's label (one part if it does not)."""

    parts: tuple[str, ...]

    def naming(self, label: str) -> str:
        return label.join(self.parts)


def _instructions(episodes: Sequence[WorldEpisode], app_labels: dict[str, str]) -> list[_Instruction]:
    out = []
    for episode in episodes:
        label = app_labels[episode.template_id.split(".")[0]]
        out.append(_Instruction(tuple(re.split(rf"(?<!\w){re.escape(label)}(?!\w)", episode.instruction))))
    return out


def launcher_sampler(episodes: Sequence[WorldEpisode], app_labels: dict[str, str],
                     forbidden: Collection[str]) -> SampleFn:
    """Clicks on drawn launchers (module docstring); `app_labels`: the episodes' apps' labels by app name."""
    every = _instructions(episodes, app_labels)
    named = [i for i in every if len(i.parts) > 1]
    if not named:
        raise ValueError("no episode instruction names its app: nothing to relabel on a drawn launcher")

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        labels = invented_labels(rng, rng.randint(*LAUNCHER_APPS), forbidden)
        screen = launcher_screen(labels, rng.randrange(WORLD_SEEDS))
        app = rng.choice(labels)
        target = Action(ActionType.CLICK, element=next(i for i, e in enumerate(screen.elements) if e.label == app))
        kind = rng.choices(list(LAUNCHER_FORMS), list(LAUNCHER_FORMS.values()))[0]
        hints: tuple[str, ...] = ()
        if kind == "launcher_named":
            instruction = rng.choice(named).naming(app)
        elif kind == "launcher_open":
            instruction = rng.choice(OPEN_FORMS).format(app=app)
        else:
            instruction, hints = rng.choice(every).naming(app), (_hint(screen, target),)
        return GroundingSample(None, screen.elements, instruction, target, kind, hints=hints, screen=screen.name)

    return sample


def in_app_sampler(episodes: Sequence[WorldEpisode]) -> SampleFn:
    """Episode clicks off the launcher, half of them on rows the instruction names verbatim, half with
    the critic's hint about the click; each with the Done lines of the steps before, as rollouts show it."""
    clicks = [(e, t) for e in episodes for t, s in enumerate(e.steps)
              if s.action.type == ActionType.CLICK and s.screen.name != LAUNCHER]
    named = [(e, t) for e, t in clicks if e.steps[t].screen.elements[e.steps[t].action.element].name in e.instruction]
    if not named:
        raise ValueError("no episode click off the launcher names a row of the instruction")

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        hinted = rng.random() < 0.5
        episode, t = rng.choice(clicks if hinted else named)
        step = episode.steps[t]
        hints = (_hint(step.screen, step.action),) if hinted else ()
        return GroundingSample(None, step.screen.elements, episode.instruction, step.action,
                               "copy_hinted" if hinted else "copy_named", hints=hints,
                               history=tuple(s.done_line for s in episode.steps[:t]), screen=step.screen.name)

    return sample


def copy_sampler(episodes: Sequence[WorldEpisode], app_labels: dict[str, str], forbidden: Collection[str]) -> SampleFn:
    """`LAUNCHER_PART` launcher copies, the rest in-app copies."""
    launcher, in_app = launcher_sampler(episodes, app_labels, forbidden), in_app_sampler(episodes)

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        return launcher(rng, render) if rng.random() < LAUNCHER_PART else in_app(rng, render)

    return sample
