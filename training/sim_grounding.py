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
from ops.actions.formats import label_echo
from ops.prompts import element_label
from phonesim.apps import load_apps
from phonesim.phone import Phone
from training.grounding_data import (GroundingSample, SampleFn, UIElement, click_instruction, clickable_rows,
                                     free_text, synthetic_sample, type_instruction)

# "type" and "toggle" draw among the screens that have a text field / a switch (few of them)
SKILL_WEIGHTS = {"click": 20, "type": 8, "toggle": 3, "read": 3, "back": 1, "scroll": 1, "open_app": 2}
READ_FORMS = ("What is the {k}? Answer with it.", "Tell me the {k}.", "What does {k} say? Answer with the value.",
              "Read {k} and answer with it.", "Which {k} is shown? Answer in one line.")
SWITCH_ON = ("Turn on", "Switch on", "Enable")
SWITCH_OFF = ("Turn off", "Switch off", "Disable")


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
            UIElement(element_label(e), tuple(e["grid"]), bool(e["clickable"]), _primary_text(e),
                      editable=e["class"].endswith("EditText"),
                      switch=e["class"].endswith(("Switch", "CheckBox")))
            for e in obs.elements)))
    return screens


def _type_sample(rng: random.Random, screen: SimScreen, names: list[str]) -> GroundingSample | None:
    """Type text into a field of `screen` (the instruction names the field when there are
    several with a name); None when the screen has no field."""
    fields = [i for i, e in enumerate(screen.elements) if e.editable]
    if not fields:
        return None
    field = rng.choice(fields)
    name = screen.elements[field].name
    text = free_text(rng, names)
    instruction = type_instruction(rng, text)
    if len(fields) > 1:
        if not name or name.startswith("("):  # unnamed fields: the first one
            field = fields[0]
        else:
            instruction += f" in {name}"
    return GroundingSample(None, screen.elements, instruction, Action(ActionType.TYPE, element=field, text=text),
                           "type", screen=screen.name)


def _flipped(label: str) -> str:
    """A switch's label after a tap: `ON [on]` <-> `OFF [off]`, `(CheckBox) [off]` -> `(CheckBox) [on]`."""
    text, _, state = label.rpartition(" [")
    on = state == "on]"
    text = {"ON": "OFF", "OFF": "ON"}.get(text, text)
    return f"{text} [{'off' if on else 'on'}]"


def _switches(elements: tuple[UIElement, ...]) -> list[int]:
    """Indices of switches whose row (the element before them) has a name."""
    return [i for i, e in enumerate(elements) if e.switch and i > 0 and elements[i - 1].named]


def _toggle_sample(rng: random.Random, screen: SimScreen) -> GroundingSample:
    """"Turn on X" where X's row is followed by its switch: tap the switch if it shows the other
    state, else stop. Half carry a Done list ending with a tap on that switch; the state on
    screen decides, never that history alone (a tap may have left the switch in the wrong state).
    `screen` must have a switch (`_switches`)."""
    elements = screen.elements
    switches = _switches(elements)
    index = rng.choice(switches)
    row = elements[index - 1]
    whole = row.label.split(" [")[0]
    # its first line ("20:45"), all of it, or the rest ("Walk the dog · Every day"), as tasks name alarms
    name = rng.choice((row.name, whole, whole[len(row.name):].strip() or row.name))
    want_on = rng.random() < 0.5
    verb = rng.choice(SWITCH_ON if want_on else SWITCH_OFF)
    instruction = f'{verb} "{name}"' if rng.random() < 0.3 else f"{verb} {name}"
    is_on = elements[index].label.endswith("[on]")
    history: tuple[str, ...] = ()
    if rng.random() < 0.5:  # the last step tapped this switch and it now shows `is_on`
        history = (label_echo.render_row(index, _flipped(elements[index].label)),)
    target = (Action(ActionType.TERMINATE, status="success") if is_on == want_on
              else Action(ActionType.CLICK, element=index))
    return GroundingSample(None, elements, instruction, target, "toggle", history=history, screen=screen.name)


def _read_rows(elements: tuple[UIElement, ...]) -> list[int]:
    """Indices of rows that show a name and a value after it ("Email ava@gmail.com")."""
    return [i for i, e in enumerate(elements)
            if e.named and not e.switch and "[" not in e.label and len(e.label) > len(e.name) + 1]


def _read_sample(rng: random.Random, screen: SimScreen, index: int) -> GroundingSample:
    """Answer with the value row `index` shows after its name ("What is the Email?" -> the address)."""
    row = screen.elements[index]
    value = row.label[len(row.name):].strip()
    return GroundingSample(None, screen.elements, rng.choice(READ_FORMS).format(k=row.name),
                           Action(ActionType.ANSWER, text=value), "read", screen=screen.name)


def sim_sampler(n_screens: int = 600, seed: int = 0, synthetic_share: float = 0.3) -> SampleFn:
    """A sample function over collected simulator screens, mixed with synthetic screens."""
    screens = collect_screens(n_screens, seed)
    with_field = [s for s in screens if any(e.editable for e in s.elements)]
    with_switch = [s for s in screens if _switches(s.elements)]
    # (screen, row) pairs, so that a screen with one such row (the launcher's clock) is not overdrawn
    value_rows = [(s, i) for s in screens for i in _read_rows(s.elements)]
    app_labels = [app.label for app in load_apps().values()]
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
        if kind == "type" and with_field:
            return _type_sample(rng, rng.choice(with_field), names)
        if kind == "toggle" and with_switch:
            return _toggle_sample(rng, rng.choice(with_switch))
        if kind == "read" and value_rows:
            return _read_sample(rng, *rng.choice(value_rows))
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

    sample.__qualname__ = f"sim_sampler(n_screens={n_screens}, seed={seed}, synthetic_share={synthetic_share})"
    return sample
