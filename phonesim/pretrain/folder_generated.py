"""Generated folders apps: many `FolderSpec`s with invented words and drawn layouts, as
`phonesim.pretrain.generated` makes collection apps, so that what the base takes from this kind is its
layouts (folder trees with counts, breadcrumbs, item pages, long-press menus, folder pickers, the bin,
forms, toasts), not its words. Item titles, folder names, texts, app labels and half the nouns are
invented words (never one another generated app uses); the other nouns and the words of kinds,
folders, stars, bins, dates and fields come from small pools of ordinary words, as real apps' do.
Everything is determined by `FOLDER_SEED`.
"""

from __future__ import annotations

import random
from collections.abc import Collection

from phonesim.pretrain.folders import BIN_PLACES, DETAIL_STYLES, NAV_STYLES, FolderSpec
from phonesim.pretrain.generated import COLORS, GLYPHS, _Words, draw_specs, invented_app

FOLDER_SEED = 3838
ITEMS, NEW_ITEMS, TOP_FOLDERS, SUBFOLDERS = 20, 6, 4, 2
NOUNS = (("clipping", "clippings"), ("sheet", "sheets"), ("scrap", "scraps"), ("card", "cards"), ("page", "pages"),
         ("snippet", "snippets"), ("piece", "pieces"), ("entry", "entries"), ("sample", "samples"))
TEXT_KINDS = ("Page", "Memo", "Sheet", "Card", "Scrap", "Jotting")
MEDIA_KINDS = ("Clip", "Loop", "Track", "Tape", "Reel", "Take")
FOLDER_WORDS = ("Folder", "Drawer", "Binder", "Tray", "Crate", "Case")
STARS = (("Star", "Starred"), ("Pin", "Pinned"), ("Favourite", "Favourited"), ("Bookmark", "Bookmarked"),
         ("Heart", "Hearted"))
BIN_WORDS = ("Bin", "Trash", "Basket", "Wastebox")
DATE_LABELS = ("Modified", "Added", "Saved", "Changed", "Created")
TITLE_LABELS = ("Title", "Name", "Heading")
BODY_LABELS = ("Text", "Body", "Content", "Details")


def _sentence(words: _Words) -> str:
    return " ".join(words.word() for _ in range(3)).capitalize() + "."


def _spec(i: int, rng: random.Random, words: _Words) -> FolderSpec:
    invented, label = invented_app(rng, words)
    noun, plural = rng.choice(NOUNS) if rng.random() < 0.5 else (invented, invented + "s")
    top = [words.word().capitalize() for _ in range(TOP_FOLDERS)]
    folders = list(top)
    for parent in rng.sample(top, SUBFOLDERS):
        folders.insert(folders.index(parent) + 1, f"{parent}/{words.word().capitalize()}")
    names = [words.name() for _ in range(ITEMS + NEW_ITEMS)]
    star, starred = rng.choice(STARS)
    return FolderSpec(
        name=f"folders{i:02d}", label=label, package=f"org.pretrain.folders{i:02d}", color=rng.choice(COLORS),
        glyph=rng.choice(GLYPHS), noun=noun, plural=plural, folders=tuple(folders), titles=tuple(names[:ITEMS]),
        new_titles=tuple(names[ITEMS:]), new_folders=tuple(words.word().capitalize() for _ in range(4)),
        bodies=tuple(_sentence(words) for _ in range(6)), new_bodies=tuple(_sentence(words) for _ in range(4)),
        text_kind=rng.choice(TEXT_KINDS), media_kind=rng.choice(MEDIA_KINDS), folder_word=rng.choice(FOLDER_WORDS),
        star_word=star, starred_word=starred, bin_word=rng.choice(BIN_WORDS), date_label=rng.choice(DATE_LABELS),
        title_label=rng.choice(TITLE_LABELS), body_label=rng.choice(BODY_LABELS), nav=rng.choice(NAV_STYLES),
        detail=rng.choice(DETAIL_STYLES), bin_place=rng.choice(BIN_PLACES))


def generated_folder_specs(n: int, taken: Collection[str] = ()) -> tuple[FolderSpec, ...]:
    """`n` generated folders apps (the same ones for the same `n` and `taken`), none of whose invented
    words is in `taken` (lower case: the words other apps use)."""
    return draw_specs(FOLDER_SEED, n, taken, _spec)
