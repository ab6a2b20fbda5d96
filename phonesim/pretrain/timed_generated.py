"""Generated timed-entry apps: many `TimedSpec`s with invented words and drawn layouts, as
`phonesim.pretrain.generated` makes collection apps, so that what the base takes from this kind is its
layouts (time rows with switches, HH:MM and date fields, search, long-press menus, toasts), not its
words. Entry titles, app labels, text values and half the nouns are invented words (never one another
generated app uses); the other nouns, the labels of times, titles, switches and menus come from small
pools of ordinary words, as real apps' do. Everything is determined by `TIMED_SEED`.
"""

from __future__ import annotations

import random
from collections.abc import Collection

from phonesim.pretrain.collection import FLAG_WIDGETS, Attribute
from phonesim.pretrain.generated import COLORS, GLYPHS, _Words, draw_specs, invented_app
from phonesim.pretrain.timed import EDIT_STYLES, SCHEDULES, SUB_LINES, TimedSpec

TIMED_SEED = 3808
ENTRIES, NEW_ENTRIES = 20, 6
NOUNS = ("chime", "wake call", "feed", "dose", "departure", "shift", "pickup", "check-in", "round", "session",
         "signal", "bell", "drill", "lesson", "slot", "ping", "nudge", "walk")
NUMBERS = (  # label, unit, range
    ("Volume", "percent", (10, 100)), ("Snooze", "min", (1, 30)), ("Platform", "", (1, 12)),
    ("Portion", "g", (20, 400)), ("Duration", "min", (5, 120)), ("Seats", "", (1, 9)), ("Level", "", (1, 10)),
    ("Priority", "", (1, 5)),
)
TEXTS = ("Tone", "Route", "Stop", "Room", "Bowl", "Sound", "Gate", "Coach", "Lane", "Melody")
ON_WORDS = ("On", "Active", "Enabled", "Armed", "Live", "Set")
TIME_LABELS = ("Time", "At", "Set for", "Goes off", "Due at")
TITLE_LABELS = ("Label", "Name", "Title", "Note", "Tag")
COPY_WORDS = ("Duplicate", "Copy", "Clone")
DELETE_WORDS = ("Delete", "Remove", "Discard")


def _attribute(rng: random.Random, words: _Words) -> Attribute:
    if rng.random() < 0.5:
        label, unit, span = rng.choice(NUMBERS)
        return Attribute(label.lower(), label, numbers=span, unit=unit)
    label = rng.choice(TEXTS)
    return Attribute(label.lower(), label, values=tuple(words.word().capitalize() for _ in range(5)))


def _spec(i: int, rng: random.Random, words: _Words) -> TimedSpec:
    invented, label = invented_app(rng, words)
    noun = rng.choice(NOUNS) if rng.random() < 0.5 else invented
    names = [words.name() for _ in range(ENTRIES + NEW_ENTRIES)]
    start, end = rng.randint(5, 8), rng.randint(19, 23)
    return TimedSpec(
        name=f"timed{i:02d}", label=label, package=f"org.pretrain.timed{i:02d}", color=rng.choice(COLORS),
        glyph=rng.choice(GLYPHS), noun=noun, plural=noun + "s", titles=tuple(names[:ENTRIES]),
        new_titles=tuple(names[ENTRIES:]), attribute=_attribute(rng, words), schedule=rng.choice(SCHEDULES),
        hours=(start, end), step=rng.choice((5, 10, 15, 20)), on_word=rng.choice(ON_WORDS),
        time_label=rng.choice(TIME_LABELS), title_label=rng.choice(TITLE_LABELS), copy_word=rng.choice(COPY_WORDS),
        delete_word=rng.choice(DELETE_WORDS), edit=rng.choice(EDIT_STYLES), sub_line=rng.choice(SUB_LINES),
        flag_widget=rng.choice(FLAG_WIDGETS))


def generated_timed_specs(n: int, taken: Collection[str] = ()) -> tuple[TimedSpec, ...]:
    """`n` generated timed-entry apps (the same ones for the same `n` and `taken`), none of whose invented
    words is in `taken` (lower case: the words other apps use)."""
    return draw_specs(TIMED_SEED, n, taken, _spec)
