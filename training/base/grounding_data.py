"""Generic grounding samples for pretraining the embedded base policy.

A sample is (screenshot, element list, instruction, canonical target action). The built-in
generator draws simulator-like screens (a title bar, rows of labelled items, an optional
text field) with realistic labels; it knows nothing about benchmark tasks. Any other source
(e.g. simulator screens) plugs in as a `SampleFn` with the same output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ops.actions import GRID, Action, ActionType


@dataclass(frozen=True, slots=True)
class UIElement:
    """One entry of the observation's element list (its position in the list is its index)."""

    label: str
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 on the 0–GRID grid
    clickable: bool = True
    text: str = ""  # first line of the visible text, as critics name the element ("" = the label)
    editable: bool = False  # a text field: typing needs one on screen

    @property
    def name(self) -> str:
        return self.text or self.label

    @property
    def named(self) -> bool:
        """Whether the element has text (else its row shows its widget kind, "(ImageButton)")."""
        return not self.label.startswith("(")


def critic_view(elements: tuple[UIElement, ...]) -> list[dict]:
    """The element dicts critics and hint marks read (first text line and grid box); rows
    without text (labelled by widget kind, "(EditText)") have none, as on the phone."""
    return [{"text": e.name if e.named else "", "grid": list(e.bbox)} for e in elements]


@dataclass(frozen=True, slots=True)
class GroundingSample:
    image: Image.Image | None  # None when the generator was asked not to render
    elements: tuple[UIElement, ...]
    instruction: str
    target: Action
    kind: str  # generator's name for the skill, e.g. "click", "type", "back"
    hints: tuple[str, ...] = ()  # one-line critic hints shown before the rows (rollout attempts >= 2)
    history: tuple[str, ...] = ()  # the "Done:" lines: what earlier steps of the episode did
    screen: str = ""  # the screen's name where known (critic hints name it)

    @property
    def n_clickable(self) -> int:
        return sum(e.clickable for e in self.elements)


def clickable_rows(elements: tuple[UIElement, ...]) -> list[int]:
    """Indices of the elements a click instruction may name: clickable and labelled."""
    return [i for i, e in enumerate(elements) if e.clickable and e.label]


# (rng, render) -> sample; `render=False` lets a generator skip drawing the screenshot, which
# dominates its cost, for text-only training batches.
SampleFn = Callable[[random.Random, bool], GroundingSample]

SETTINGS = (
    "Wi-Fi", "Bluetooth", "Mobile network", "Airplane mode", "Hotspot", "Display", "Brightness",
    "Dark mode", "Sound", "Volume", "Ringtone", "Vibration", "Notifications", "Battery",
    "Battery saver", "Storage", "Apps", "Default apps", "Privacy", "Security", "Location",
    "Accounts", "Google", "Language", "Keyboard", "Date & time", "Backup", "Reset options",
    "About phone", "Accessibility", "Font size", "Screen timeout", "Do not disturb", "NFC",
    "Printing", "VPN", "Data usage", "Developer options", "System update", "Wallpaper",
)
FIRST_NAMES = (
    "Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Isabel", "Jack",
    "Kate", "Liam", "Mia", "Noah", "Olivia", "Peter", "Quinn", "Rosa", "Sam", "Tina", "Uma",
    "Victor", "Wendy", "Xavier", "Yara", "Zoe", "Omar", "Lena", "Marco", "Nina",
)
LAST_NAMES = (
    "Smith", "Jones", "Brown", "Garcia", "Miller", "Davis", "Wilson", "Moore", "Taylor", "Lee",
    "Chen", "Kim", "Patel", "Novak", "Rossi", "Silva", "Khan", "Berg",
)
APPS = (
    "Settings", "Contacts", "Phone", "Messages", "Camera", "Gallery", "Clock", "Calendar",
    "Calculator", "Chrome", "Files", "Maps", "Music", "Notes", "Gmail", "Play Store", "YouTube",
    "Weather", "Recorder", "Drive", "Photos", "Tasks", "Keep", "Podcasts", "Translate",
)
BUTTONS = (
    "OK", "Cancel", "Save", "Delete", "Edit", "Add", "Search", "Next", "Done", "Send", "Share",
    "More", "Close", "Allow", "Deny", "Confirm", "Submit", "Sign in", "Skip", "Continue",
    "Retry", "Undo", "New contact", "Add event", "Create", "Apply", "Reset", "Favorites",
)
TITLES = ("Settings", "Contacts", "Network", "Display", "Sound", "Apps", "Messages", "Files", "Notes")
WORDS = (
    "hello", "meeting", "tomorrow", "lunch", "project", "call me", "see you", "ok", "thanks",
    "groceries", "report", "home", "work", "weekend", "budget", "flight", "hotel", "photo",
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
CLICK_VERBS = ("Tap", "Click", "Press", "Select", "Open", "Tap on")
TYPE_FORMS = ("Type {t}", 'Type "{t}"', 'Enter "{t}"', 'Write "{t}" in the field', "Search for {t}",
              'Search for "{t}"', 'Fill in "{t}"', 'Name it "{t}"', "Set it to {t}")
# Skill mix: clicks dominate because picking the element is the skill that needs the most data;
# the other skills are learned within the first ~1000 steps (see benchmarks/base_policy_learnability.py).
SKILL_WEIGHTS = {"click": 20, "type": 2, "back": 1, "scroll": 1, "open_app": 1, "answer": 1}


def free_text(rng: random.Random, names: list[str], words: Sequence[str] | None = None) -> str:
    """Text to type: a name seen on some screen, a number, a date or time, or a few words (from
    `words`, default the generic `WORDS`, and the names' words).

    Drawn from open-ended sources so that typing is learned as copying the instruction's text,
    not as recalling a fixed vocabulary (a base trained on 18 fixed phrases typed them anywhere).
    """
    kind = rng.random()
    if kind < 0.35 and names:
        return rng.choice(names)
    if kind < 0.5:
        return str(rng.randint(1, 500)) if rng.random() < 0.5 else f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
    if kind < 0.65:
        if rng.random() < 0.5:
            return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2020, 2026)}"
        return f"{rng.randint(1, 12)}:{rng.choice(('00', '15', '30', '45'))} {rng.choice(('AM', 'PM'))}"
    pool = list(WORDS if words is None else words) + [w for n in names for w in n.split() if w.isalpha()]
    words = " ".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
    return words.capitalize() if rng.random() < 0.5 else words


def type_instruction(rng: random.Random, text: str) -> str:
    """An instruction asking to type `text` into the field on screen."""
    return rng.choice(TYPE_FORMS).format(t=text)


def click_instruction(rng: random.Random, name: str) -> str:
    """An instruction naming the element to tap, bare ("Tap Wi-Fi") or quoted as task sentences
    quote names ('Open "Q2 goals"'), so quotes alone never mean "type"."""
    return f'{rng.choice(CLICK_VERBS)} "{name}"' if rng.random() < 0.3 else f"{rng.choice(CLICK_VERBS)} {name}"


def item_labels(rng: random.Random, n: int) -> list[str]:
    """`n` distinct labels from one realistic family (settings, contacts, apps or buttons)."""
    family = rng.randrange(4)
    if family == 0:
        pool = list(SETTINGS)
    elif family == 1:
        # dict, not set: a set's order follows the process's string hash seed, so the shuffle
        # below (and every sample after it) would differ from run to run
        pool = list(dict.fromkeys(f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(3 * n)))
    elif family == 2:
        pool = list(APPS)
    else:
        pool = list(BUTTONS)
    rng.shuffle(pool)
    if len(pool) < n:
        raise ValueError(f"label family {family} has only {len(pool)} labels, need {n}")
    return pool[:n]


def _layout(rng: random.Random, labels: list[str], with_field: bool) -> tuple[UIElement, ...]:
    """Title (not clickable), optional text field, then one row per label, on the 0–GRID grid."""
    elements = [UIElement(rng.choice(TITLES), (40, 40, 960, 100), clickable=False)]
    top = 130
    if with_field:
        elements.append(UIElement(rng.choice(("Search", "Name", "Message", "Title")), (40, top, 960, top + 60),
                                  editable=True))
        top += 80
    row = min(90, (GRID - 40 - top) // max(1, len(labels)))
    for i, label in enumerate(labels):
        y0 = top + i * row
        elements.append(UIElement(label, (40, y0, 960, y0 + row - 10)))
    return tuple(elements)


def render_screen(elements: tuple[UIElement, ...], size: tuple[int, int] = (270, 600)) -> Image.Image:
    """Draw the elements as a simple phone screen: grey title, outlined rows with text."""
    w, h = size
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    for e in elements:
        x0, y0, x1, y1 = (e.bbox[0] * w // GRID, e.bbox[1] * h // GRID, e.bbox[2] * w // GRID, e.bbox[3] * h // GRID)
        if e.clickable:
            draw.rectangle((x0, y0, x1, y1), outline=(120, 120, 140), fill=(235, 238, 245))
        else:
            draw.rectangle((x0, y0, x1, y1), fill=(60, 90, 160))
        draw.text((x0 + 6, y0 + 4), e.label, fill=(20, 20, 20) if e.clickable else (255, 255, 255))
    return image


def synthetic_sample(rng: random.Random, render: bool = True, *, min_items: int = 3, max_items: int = 9,
                     skill_weights: dict[str, int] | None = None) -> GroundingSample:
    """One generic grounding sample, skill drawn from `skill_weights` (default `SKILL_WEIGHTS`)."""
    weights = skill_weights or SKILL_WEIGHTS
    unknown = set(weights) - set(SKILL_WEIGHTS)
    if unknown:
        raise ValueError(f"unknown skills {sorted(unknown)}; known: {sorted(SKILL_WEIGHTS)}")
    labels = item_labels(rng, rng.randint(min_items, max_items))
    kind = rng.choices(list(weights), list(weights.values()))[0]
    elements = _layout(rng, labels, with_field=kind == "type")
    first_row = 2 if kind == "type" else 1
    if kind == "click":
        index = rng.randrange(first_row, len(elements))
        instruction = click_instruction(rng, elements[index].label)
        target = Action(ActionType.CLICK, element=index)
    elif kind == "type":
        text = free_text(rng, labels)
        instruction = type_instruction(rng, text)
        target = Action(ActionType.TYPE, element=1, text=text)  # into the field (row 1)
    elif kind == "back":
        instruction = rng.choice(("Go back", "Press back", "Return to the previous screen"))
        target = Action(ActionType.SYSTEM_BUTTON, button="back")
    elif kind == "scroll":
        down = rng.random() < 0.5
        instruction = f"Scroll {'down' if down else 'up'}"
        # the finger moves opposite to the scroll direction (see phonesim.actions.Action)
        target = Action(ActionType.SWIPE, direction="up" if down else "down")
    elif kind == "open_app":
        app = rng.choice(APPS)
        instruction = f"Open the {app} app"
        target = Action(ActionType.OPEN_APP, app=app)
    else:
        label = elements[rng.randrange(first_row, len(elements))].label
        instruction = f"Answer {label}"
        target = Action(ActionType.ANSWER, text=label)
    image = render_screen(elements) if render else None
    return GroundingSample(image, elements, instruction, target, kind)
