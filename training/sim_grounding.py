"""Generic grounding samples on real simulator screens (no task is involved).

Random walks through every phonesim app collect screens; each sample names one element of a
screen ("Tap Wi-Fi"), or asks for back / scroll / open app / typing, exactly like the synthetic
generator, but with the element lists, label vocabulary and list lengths rollouts will see.
The walks tap random clickable elements; no task template, judge or solution is consulted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ops.actions import Action, ActionType
from ops.prompts import element_label
from phonesim.apps import load_apps
from phonesim.phone import Phone
from training.grounding_data import (CLICK_VERBS, WORDS, GroundingSample, SampleFn, UIElement, clickable_rows,
                                     synthetic_sample)

SKILL_WEIGHTS = {"click": 20, "type": 2, "back": 1, "scroll": 1, "open_app": 2}


@dataclass(frozen=True, slots=True)
class SimScreen:
    """A simulator screen as the policy sees it: its screen name and element list."""

    name: str
    elements: tuple[UIElement, ...]


def _primary_text(element: dict) -> str:
    return (element.get("text") or element.get("desc") or "").split("\n")[0].strip()


def collect_screens(n_screens: int, seed: int, max_walk: int = 4) -> list[SimScreen]:
    """`n_screens` screens reached by short random walks from each app's start."""
    rng = random.Random(seed)
    apps = sorted(load_apps())
    screens = []
    while len(screens) < n_screens:
        phone = Phone(world_seed=rng.randrange(3))
        launcher = rng.random() < 0.1  # the launcher itself: every task starts there
        phone.launch(rng.choice(apps))
        if launcher:
            phone.step(Action(ActionType.SYSTEM_BUTTON, button="home"))
        else:
            for _ in range(rng.randrange(max_walk + 1)):
                clickable = [e for e in phone.observe().elements if e["clickable"]]
                if not clickable:
                    break
                phone.step(Action(ActionType.CLICK, element=rng.choice(clickable)["index"]))
        obs = phone.observe()
        screens.append(SimScreen(obs.screen, tuple(
            UIElement(element_label(e), tuple(e["grid"]), bool(e["clickable"]), _primary_text(e))
            for e in obs.elements)))
    return screens


def sim_sampler(n_screens: int = 600, seed: int = 0, synthetic_share: float = 0.3) -> SampleFn:
    """A sample function over collected simulator screens, mixed with synthetic screens."""
    screens = collect_screens(n_screens, seed)
    app_labels = [app.label for app in load_apps().values()]

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        if render or rng.random() < synthetic_share:  # screenshots only exist for synthetic screens
            return synthetic_sample(rng, render)
        screen = rng.choice(screens)
        elements = screen.elements
        clickable = clickable_rows(elements)
        kind = rng.choices(list(SKILL_WEIGHTS), list(SKILL_WEIGHTS.values()))[0]
        if kind == "click" and clickable:
            index = rng.choice(clickable)
            # the whole row, or only its first line of text: tasks name "Display", not its summary
            name = elements[index].name if rng.random() < 0.5 else elements[index].label.split(" [")[0]
            return GroundingSample(None, elements, f"{rng.choice(CLICK_VERBS)} {name}",
                                   Action(ActionType.CLICK, element=index), "click", screen=screen.name)
        if kind == "type":
            text = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
            instruction = rng.choice((f"Type {text}", f'Enter "{text}"', f'Write "{text}" in the field',
                                      f"Search for {text}"))
            return GroundingSample(None, elements, instruction, Action(ActionType.TYPE, text=text), "type")
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

    sample.__qualname__ = f"sim_sampler(n_screens={n_screens}, seed={seed}, synthetic_share={synthetic_share})"
    return sample
