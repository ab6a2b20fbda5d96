"""Generic grounding samples on real simulator screens (no task is involved).

Random walks through every phonesim app collect screens; each sample names one element of a
screen ("Tap Wi-Fi"), or asks for back / scroll / open app / typing, exactly like the synthetic
generator, but with the element lists, label vocabulary and list lengths rollouts will see.
The walks tap random clickable elements; no task template, judge or solution is consulted.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ops.actions import Action, ActionType
from ops.agent.policy_prompt import element_label
from phonesim.app import App
from phonesim.apps import load_apps
from phonesim.observation import Observation
from phonesim.phone import Phone
from training.base.grounding_data import (GroundingSample, SampleFn, UIElement, click_instruction, clickable_rows,
                                          free_text, synthetic_sample, type_instruction)

# "type" falls back to a click on screens without a text field (most of them)
SKILL_WEIGHTS = {"click": 20, "type": 4, "back": 1, "scroll": 1, "open_app": 2}


@dataclass(frozen=True, slots=True)
class SimScreen:
    """A simulator screen as the policy sees it: its screen name and element list."""

    name: str
    elements: tuple[UIElement, ...]


def _primary_text(element: dict) -> str:
    return (element.get("text") or element.get("desc") or "").split("\n")[0].strip()


def collect_screens(n_screens: int, seed: int, max_walk: int = 4,
                    catalog: Mapping[str, App] | Callable[[str], Mapping[str, App]] | None = None,
                    apps: Sequence[str] | None = None) -> list[SimScreen]:
    """`n_screens` screens reached by short random walks from the start of each of `apps` (default:
    every app of `catalog`, by default the target apps) on phones with `catalog`'s apps (a function
    of the app walked: the apps of the phone that holds it)."""
    rng = random.Random(seed)
    everything = catalog if isinstance(catalog, Mapping) else load_apps() if catalog is None else None
    if apps is None and everything is None:
        raise ValueError("collect_screens: name the apps to walk when the catalog depends on the app")
    apps = sorted(apps if apps is not None else everything)
    screens = []
    while len(screens) < n_screens:
        world_seed = rng.randrange(3)
        launcher = rng.random() < 0.1  # the launcher itself: every task starts there
        app = rng.choice(apps)
        phone = Phone(world_seed=world_seed, catalog=catalog(app) if callable(catalog) else catalog)
        phone.launch(app)
        if launcher:
            phone.step(Action(ActionType.SYSTEM_BUTTON, button="home"))
        else:
            random_taps(rng, phone, rng.randrange(max_walk + 1))
        if phone.current_app in phone.apps and phone.current_app not in apps:
            continue  # the walk went home and into an app not walked (a held-out one): not its screens
        screens.append(sim_screen(phone.observe()))
    return screens


def random_taps(rng: random.Random, phone: Phone, n: int) -> None:
    """Up to `n` taps on random clickable elements of `phone`'s current screens."""
    for _ in range(n):
        clickable = [e for e in phone.observe().elements if e["clickable"]]
        if not clickable:
            return
        phone.step(Action(ActionType.CLICK, element=rng.choice(clickable)["index"]))


def sim_screen(obs: Observation) -> SimScreen:
    """A phone observation as the policy sees it."""
    return SimScreen(obs.screen, tuple(
        UIElement(element_label(e), tuple(e["grid"]), bool(e["clickable"]), _primary_text(e),
                  editable=e["class"].endswith("EditText"))
        for e in obs.elements))


def _type_sample(rng: random.Random, screen: SimScreen, names: list[str],
                 words: Sequence[str] | None = None) -> GroundingSample | None:
    """Type text into a field of `screen` (the instruction names the field when there are
    several with a name); None when the screen has no field."""
    fields = [i for i, e in enumerate(screen.elements) if e.editable]
    if not fields:
        return None
    field = rng.choice(fields)
    name = screen.elements[field].name
    text = free_text(rng, names, words)
    instruction = type_instruction(rng, text)
    if len(fields) > 1:
        if not name or name.startswith("("):  # unnamed fields: the first one
            field = fields[0]
        else:
            instruction += f" in {name}"
    return GroundingSample(None, screen.elements, instruction, Action(ActionType.TYPE, element=field, text=text),
                           "type", screen=screen.name)


def sim_sampler(n_screens: int = 600, seed: int = 0, synthetic_share: float = 0.3,
                catalog: Mapping[str, App] | Callable[[str], Mapping[str, App]] | None = None,
                apps: Sequence[str] | None = None, words: Sequence[str] | None = None) -> SampleFn:
    """A sample function over collected simulator screens, mixed with synthetic screens. `catalog`
    and `apps` choose the phones' apps and the apps walked (`collect_screens`; open-app samples name
    the walked apps); `words`, the free words typing samples may carry (default: the generic pool)."""
    screens = collect_screens(n_screens, seed, catalog=catalog, apps=apps)
    registry = catalog if isinstance(catalog, Mapping) else load_apps() if catalog is None else None
    app_labels = ([registry[name].label for name in (apps if apps is not None else registry)] if registry is not None
                  else [catalog(name)[name].label for name in apps])
    # everything written on the collected screens: the names typing instructions may carry
    names = sorted({e.name for screen in screens for e in screen.elements
                    if any(c.isalpha() for c in e.name) and not e.name.startswith("(")})

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        if render or rng.random() < synthetic_share:  # screenshots only exist for synthetic screens
            return synthetic_sample(rng, render)
        screen = rng.choice(screens)
        elements = screen.elements
        clickable = clickable_rows(elements)
        kind = rng.choices(list(SKILL_WEIGHTS), list(SKILL_WEIGHTS.values()))[0]
        if kind == "type":
            typed = _type_sample(rng, screen, names, words)
            if typed is not None:
                return typed
            kind = "click"  # no field on this screen: typing is never the answer here
        if kind == "click" and clickable:
            index = rng.choice(clickable)
            # the whole row, or only its first line of text: tasks name "Display", not its summary
            name = elements[index].name if rng.random() < 0.5 else elements[index].label.split(" [")[0]
            return GroundingSample(None, elements, click_instruction(rng, name),
                                   Action(ActionType.CLICK, element=index), "click", screen=screen.name)
        if kind == "open_app":
            app = rng.choice(app_labels)
            return GroundingSample(None, elements, f"Open the {app} app", Action(ActionType.OPEN_APP, app=app),
                                   "open_app")
        if kind == "scroll":
            down = rng.random() < 0.5
            return GroundingSample(None, elements, f"Scroll {'down' if down else 'up'}",
                                   Action(ActionType.SWIPE, direction="up" if down else "down"), "scroll")
        return GroundingSample(None, elements, rng.choice(("Go back", "Press back")),
                               Action(ActionType.SYSTEM_BUTTON, button="back"), "back")

    world = "" if apps is None else f", apps={list(apps)}"
    sample.__qualname__ = f"sim_sampler(n_screens={n_screens}, seed={seed}, synthetic_share={synthetic_share}{world})"
    return sample
