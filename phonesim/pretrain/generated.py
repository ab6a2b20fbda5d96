"""Generated pretraining apps: many collection apps with made-up words, so that what transfers is reading.

Six hand-written apps teach a small model their own screens: a 0.28 M-parameter base pretrained on
them clicked the right row on 0.86 of the steps of their tasks but 0.26 on two apps it had not seen
(docs/base-ceiling.md). Many apps whose records, groups, values, app labels and record nouns are
invented words ("brells" in "Brellbox", the record "Vorn Tasket") leave nothing to memorise but the
skills: find the launcher row that shares a word with the task, the row the instruction names, the
field a question asks for. Labels of fields, flags, preferences and pins come from small pools of
ordinary words (Weight, Archived, Auto sync, Star), as real apps' do; layouts are drawn too.
Everything is determined by `GENERATOR_SEED`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from typing import Any

from phonesim.pretrain.collection import DETAIL_STYLES, FLAG_WIDGETS, GROUP_STYLES, Attribute, CollectionSpec

GENERATOR_SEED = 38
ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "gl", "sk", "pl", "dr",
          "fr", "sn", "st", "gr", "cl")
VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ee", "oo")
CODAS = ("", "", "", "n", "r", "l", "s", "k", "m", "t", "nd")
NUMBERS = (  # label, unit, range
    ("Weight", "g", (20, 4000)), ("Height", "cm", (5, 250)), ("Depth", "m", (1, 90)), ("Capacity", "L", (1, 60)),
    ("Speed", "km/h", (5, 140)), ("Score", "points", (1, 100)), ("Charge", "percent", (0, 100)),
    ("Range", "km", (2, 800)), ("Rating", "stars", (1, 5)), ("Grade", "", (1, 12)), ("Age", "years", (1, 40)),
    ("Batch", "", (100, 999)), ("Count", "pieces", (1, 500)),
)
TEXTS = ("Origin", "Material", "Pattern", "Texture", "Flavour", "Keeper", "Finish", "Tone", "Shape", "Style",
         "Supplier", "Breed", "Glaze", "Blend")
FLAGS = ("Archived", "Shared", "Checked", "Hidden", "Active", "Synced", "Verified", "Locked", "Packed", "Sealed",
         "Polished", "Tagged", "Muted", "Charged", "Cleaned", "Insured")
PINS = (("Pin", "Pinned"), ("Star", "Starred"), ("Flag", "Flagged"), ("Heart", "Hearted"), ("Bookmark", "Bookmarked"),
        ("Like", "Liked"), ("Follow", "Followed"), ("Mark", "Marked"))
OPTIONS = ("Auto sync", "Compact view", "Sound effects", "Daily digest", "Show badges", "Quick add", "Smart sort",
           "Haptic taps", "Offline mode", "Grid view", "Auto backup", "Weekly summary", "Colour tags", "Show hints",
           "Swipe actions", "Cloud copies", "Low data", "Animations", "Reminders", "Guest access")
CHOICES = (("Sort by", ("Name", "Newest", "Oldest", "Size")), ("View mode", ("List", "Grid", "Cards")),
           ("Accent colour", ("Blue", "Green", "Orange", "Purple")), ("Start page", ("Home", "Recent", "Pinned")),
           ("Units", ("Metric", "Imperial")), ("List density", ("Roomy", "Normal", "Dense")))
GROUP_NAMES = (("Section", "Sections"), ("Folder", "Folders"), ("Shelf", "Shelves"), ("Group", "Groups"),
               ("Zone", "Zones"), ("Collection", "Collections"), ("Set", "Sets"), ("Rack", "Racks"), ("Box", "Boxes"),
               ("Bin", "Bins"))
LABEL_SUFFIXES = ("box", "hub", "log", "kit", "desk", "book", "base", "mate")
COLORS = ("#1565c0", "#2e7d32", "#c62828", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e", "#283593", "#ad1457",
          "#558b2f")
GLYPHS = ("star", "group", "info", "edit", "display", "sound", "location", "person", "settings", "check")


class _Words:
    """Invented words, never the same one twice."""

    def __init__(self, rng: random.Random):
        self.rng, self.used = rng, set()

    def word(self, syllables: int | None = None) -> str:
        while True:
            n = syllables or self.rng.choice((1, 2, 2))
            w = "".join(self.rng.choice(ONSETS) + self.rng.choice(VOWELS) + self.rng.choice(CODAS) for _ in range(n))
            if 4 <= len(w) <= 8 and w not in self.used:
                self.used.add(w)
                return w

    def name(self) -> str:
        """A record's title: one or two invented words, capitalised."""
        return " ".join(self.word().capitalize() for _ in range(self.rng.choice((1, 2, 2))))


def invented_app(rng: random.Random, words: _Words) -> tuple[str, str]:
    """A generated app's record noun and its launcher label in one of three forms: the plural
    ("Dezams"), the noun with a suffix ("Dezamhub") or another invented word ("Zimtrak")."""
    noun = words.word(2)
    kind = rng.random()
    label = noun + "s" if kind < 0.6 else noun + rng.choice(LABEL_SUFFIXES) if kind < 0.85 else words.word(2)
    return noun, label.capitalize()


def draw_specs(seed: int, n: int, taken: Collection[str], make: Callable[[int, random.Random, _Words], Any]) -> tuple:
    """`n` specs of one generated kind, `make(i, rng, words)` each from one stream seeded with `seed` (the same
    ones for the same arguments), none of whose invented words is in `taken` (lower case: other apps' words)."""
    rng = random.Random(seed)
    words = _Words(rng)
    words.used |= {w.lower() for w in taken}
    return tuple(make(i, rng, words) for i in range(n))


def _spec(i: int, rng: random.Random, words: _Words) -> CollectionSpec:
    noun, label = invented_app(rng, words)
    plural = noun + "s"
    names = [words.name() for _ in range(22)]
    numbers = rng.sample(NUMBERS, rng.choice((1, 2)))
    attributes = [Attribute(lab.lower().replace(" ", "_"), lab, numbers=span, unit=unit) for lab, unit, span in numbers]
    for lab in rng.sample(TEXTS, 3 - len(attributes)):
        attributes.append(Attribute(lab.lower(), lab, values=tuple(words.word().capitalize() for _ in range(5))))
    rng.shuffle(attributes)
    flag = rng.choice(FLAGS)
    pin, pinned = rng.choice(PINS)
    choice, choices = rng.choice(CHOICES)
    group_one, group_label = rng.choice(GROUP_NAMES)
    return CollectionSpec(
        name=f"gen{i:02d}", label=label, package=f"org.pretrain.gen{i:02d}", color=rng.choice(COLORS),
        glyph=rng.choice(GLYPHS), noun=noun, plural=plural, titles=tuple(names[:14]), new_titles=tuple(names[14:]),
        group=Attribute("group_of", group_one, values=tuple(words.word().capitalize() for _ in range(4))),
        groups_label=group_label, attributes=tuple(attributes),
        flag=flag, flag_on=f'mark "{{title}}" as {flag.lower()}', flag_off=f'mark "{{title}}" as not {flag.lower()}',
        pin=pin, pinned=pinned, options=tuple(rng.sample(OPTIONS, 3)), choice=choice, choices=choices,
        version=f"{rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        detail=rng.choice(DETAIL_STYLES), groups=rng.choice(GROUP_STYLES), flag_widget=rng.choice(FLAG_WIDGETS))


def _generate(n: int) -> tuple[tuple[CollectionSpec, ...], frozenset[str]]:
    rng = random.Random(GENERATOR_SEED)
    words = _Words(rng)
    return tuple(_spec(i, rng, words) for i in range(n)), frozenset(words.used)


def generated_specs(n: int) -> tuple[CollectionSpec, ...]:
    """`n` generated collection apps (the same ones for the same `n`)."""
    return _generate(n)[0]


def generated_words(n: int) -> frozenset[str]:
    """Every invented word the `n` generated collection apps use (lower case): other generators leave them
    out, so that no two generated apps share a word."""
    return _generate(n)[1]
