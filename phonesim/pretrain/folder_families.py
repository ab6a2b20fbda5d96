"""Task families of the folders apps (`phonesim.pretrain.folders`), worded with each app's own nouns: open
an item in its folder, or find one kept in a subfolder through the search field (the shorter way there);
move one (the long-press menu's folder picker), rename one (clear the field, type), star one (the
long-press menu, nowhere else), put one in the bin (a confirmation), restore one from the bin, empty the
bin (a confirmation); make a folder, write an item (a title and a body typed in); read an item's size or
date off its page, count a folder's items; change the sort order (a dialog); play a media item, then stop
it. Split "pretrain" like every pretraining family; the solver plays them and their judges verify them as
the target templates'.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.answers import AnswerSpec
from phonesim.dates import month_day_year
from phonesim.pretrain.folders import SORTS, FolderSpec, all_items, folder_name, get_item, live_items
from phonesim.pretrain.templating import AppFamily
from phonesim.records import Lookup
from phonesim.task_template import Params, TaskTemplate, extend

DATE_HINT = "a date (YYYY-MM-DD)"  # the answer formats every world's instructions append


class _Family(AppFamily):
    """Template helpers for one folders app."""

    def __init__(self, spec: FolderSpec):
        super().__init__(spec.name, Lookup(spec.name, live_items, get_item, overlay_key="items"), "iid")
        self.spec = spec
        self.fw, self.bin = spec.folder_word.lower(), spec.bin_word.lower()

    # --- sampling and reading ------------------------------------------------------------------
    def pick_where(self, where: Callable[[dict[str, Any]], bool] = lambda r: True
                   ) -> Callable[[random.Random, Any], Params]:
        """A sampler of one item not in the bin (and `where` it holds): its id, title and folder's name."""
        def sample(rng: random.Random, phone: Any) -> Params:
            rec = rng.choice([r for r in self.items.records(phone) if where(r)])
            return {"iid": rec["id"], "title": rec["title"], "folder": folder_name(rec["folder"])}
        return sample

    def data(self, phone: Any) -> dict[str, Any]:
        return phone.data(self.name)

    def opened(self, phone: Any, p: Params) -> list:
        return [("open", self.on_page(phone, "item", iid=p["iid"]))]

    # --- families ------------------------------------------------------------------------------
    def navigation(self) -> list[TaskTemplate]:
        s = self.spec
        return [
            self.template("open_item", objective="operate", difficulty=1, budget=12, sample=self.pick_where(),
                          checks=self.opened,
                          instructions=(f'Open the {s.noun} "{{title}}" in the {{folder}} {self.fw}.',
                                        f'Show me "{{title}}", which {s.label} keeps in {{folder}}.')),
            self.template("search_open", objective="operate", difficulty=2, budget=12, checks=self.opened,
                          sample=self.pick_where(lambda r: "/" in r["folder"]), hints=lambda p: [p["title"]],
                          instructions=(f'Search {s.label} for "{{title}}" and open it.',
                                        f'Track down the {s.noun} "{{title}}" and bring it up.')),
        ]

    def long_press(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_dest(rng, phone, p) -> Params:
            here = self.items.attr(phone, p["iid"], "folder")
            return {"dest": folder_name(rng.choice([f for f in s.folders if f != here]))}

        def sample_new(rng, phone, p) -> Params:
            return {"new": rng.choice(s.new_titles)}

        def field_is(key: str, param: str):
            return lambda phone, p: [(key, (self.items.attr(phone, p["iid"], key) or "").rpartition("/")[2]
                                      == p[param])]

        return [
            self.template("move", objective="operate", difficulty=3, budget=15, composition="deep_dive",
                          sample=extend(self.pick_where(), sample_dest), checks=field_is("folder", "dest"),
                          expected=lambda p: [self.path(p, "folder")],
                          instructions=(f'Shift "{{title}}" over to the {{dest}} {self.fw}.',
                                        '"{title}" belongs in {dest}: relocate it there.')),
            self.template("rename", objective="operate", difficulty=3, budget=16, composition="deep_dive",
                          sample=extend(self.pick_where(), sample_new), checks=field_is("title", "new"),
                          expected=lambda p: [self.path(p, "title")], hints=lambda p: [p["new"]],
                          instructions=(f'Give the {s.noun} "{{title}}" the new title "{{new}}".',
                                        f'Retitle "{{title}}" as "{{new}}" in {s.label}.')),
            self.template("star", objective="operate", difficulty=2, budget=12, sample=self.pick_where(),
                          setup=self.set_field("starred", False),
                          checks=lambda phone, p: [("starred", self.items.attr(phone, p["iid"], "starred") is True)],
                          expected=lambda p: [self.path(p, "starred")],
                          instructions=(f'{s.star_word} the {s.noun} "{{title}}".',
                                        f'Mark "{{title}}" as {s.starred_word.lower()} in {s.label}.')),
        ]

    def bin_families(self) -> list[TaskTemplate]:
        s = self.spec

        def trashed_is(value: bool):
            return lambda phone, p: [("bin", (self.items.record(phone, p["iid"]) or {}).get("trashed") is value)]

        def sample_binned(rng, phone) -> Params:
            return {"gone": sorted(r["id"] for r in all_items(phone.world(s.name), self.data(phone)) if r["trashed"])}

        return [
            self.template("delete", objective="operate", difficulty=2, budget=15, sample=self.pick_where(),
                          checks=trashed_is(True), expected=lambda p: [self.path(p, "trashed")],
                          instructions=(f'Throw the {s.noun} "{{title}}" in the {self.bin}.',
                                        f'Discard "{{title}}" from {s.label}.')),
            self.template("restore", objective="operate", difficulty=2, budget=12, sample=self.pick_where(),
                          setup=self.set_field("trashed", True), checks=trashed_is(False),
                          expected=lambda p: [self.path(p, "trashed")],
                          instructions=(f'Take "{{title}}" back out of the {self.bin}.',
                                        f'Recover the {s.noun} "{{title}}" from the {self.bin} of {s.label}.')),
            self.template("empty_bin", objective="operate", difficulty=2, budget=10, sample=sample_binned,
                          checks=lambda phone, p: [(i, self.items.record(phone, i) is None) for i in p["gone"]],
                          expected=lambda p: [f"{s.name}.items.{i}" for i in p["gone"]],
                          instructions=(f"Clear out the {self.bin} of {s.label} for good.",
                                        f"Erase everything waiting in the {self.bin} of {s.label}.")),
        ]

    def forms(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_item(rng, phone) -> Params:
            return {"folder": folder_name(rng.choice(s.folders)), "new": rng.choice(s.new_titles),
                    "body": rng.choice(s.new_bodies)}

        def written(phone, p) -> list:
            made = [r for r in self.items.records(phone) if r["id"].startswith("n") and r["title"] == p["new"]]
            return [("made", bool(made)), ("body", any(r["body"] == p["body"] for r in made)),
                    ("folder", any(folder_name(r["folder"]) == p["folder"] for r in made))]

        return [
            self.template("new_folder", objective="operate", difficulty=2, budget=10,
                          sample=lambda rng, phone: {"new": rng.choice(s.new_folders)},
                          checks=lambda phone, p: [("made", p["new"] in self.data(phone)["folders"])],
                          expected=lambda p: [f"{s.name}.folders.*"], hints=lambda p: [p["new"]],
                          instructions=(f'Make a {self.fw} named "{{new}}" in {s.label}.',
                                        f'{s.label} needs one more {self.fw}: "{{new}}".')),
            self.template("new_item", objective="operate", difficulty=3, budget=18, sample=sample_item,
                          checks=written, expected=lambda p: [f"{s.name}.items.n*"],
                          hints=lambda p: [p["new"], p["body"]],
                          instructions=(f'In {{folder}}, write a new {s.noun} "{{new}}" with the text "{{body}}"',
                                        f'Add a new {s.noun} titled "{{new}}" to the {{folder}} {self.fw}; '
                                        f'it should read "{{body}}"')),
        ]

    def queries(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_folder(rng, phone) -> Params:
            return {"folder": folder_name(rng.choice(s.folders))}

        def count(phone, p) -> AnswerSpec:
            n = sum(folder_name(r["folder"]) == p["folder"] for r in self.items.records(phone))
            return AnswerSpec("number", float(n), hint="a number")

        return [
            self.template("query_size", objective="query", difficulty=2, budget=12, composition="deep_dive",
                          sample=self.pick_where(),
                          answer=lambda phone, p: AnswerSpec(
                              "number", float(self.items.attr(phone, p["iid"], "size")), hint="a number"),
                          evidence=lambda p, spec: [f"Size\n{spec.gold:g} kB"],
                          instructions=('How many kB does "{title}" take up?',
                                        f'Tell me the size of the {s.noun} "{{title}}" in kB.')),
            self.template("query_date", objective="query", difficulty=2, budget=12, composition="deep_dive",
                          sample=self.pick_where(),
                          answer=lambda phone, p: AnswerSpec("date", self.items.attr(phone, p["iid"], "date"),
                                                             hint=DATE_HINT),
                          evidence=lambda p, spec: [f"{s.date_label}\n{month_day_year(spec.gold)}"],
                          instructions=(f'Which date does {s.label} give as {s.date_label} for "{{title}}"?',
                                        f'Read me the {s.date_label.lower()} date of the {s.noun} "{{title}}".')),
            self.template("query_count", objective="query", difficulty=2, budget=10, sample=sample_folder,
                          answer=count, evidence=lambda p, spec: [f"{p['folder']}\n{s.amount(int(spec.gold))}",
                                                                  f"{s.amount(int(spec.gold))} · by "],
                          instructions=(f"How many {s.plural} sit in the {{folder}} {self.fw}?",
                                        f"Count the {s.plural} kept in {{folder}}.")),
        ]

    def operations(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_sort(rng, phone) -> Params:
            key = rng.choice([k for k in SORTS if k != self.data(phone)["sort"]])
            return {"key": key, "order": s.sort_label(key).lower()}

        def sample_plays(rng, phone, p) -> Params:
            return {"plays": self.items.attr(phone, p["iid"], "plays")}

        def played(phone, p) -> list:
            return [("played", self.items.attr(phone, p["iid"], "plays") == p["plays"] + 1),
                    ("stopped", self.data(phone)["playing"] == "")]

        return [
            self.template("sort", objective="operate", difficulty=2, budget=10, sample=sample_sort,
                          checks=lambda phone, p: [("sort", self.data(phone)["sort"] == p["key"])],
                          expected=lambda p: [f"{s.name}.sort"],
                          instructions=(f"Order the {s.plural} of {s.label} by {{order}}.",
                                        f"In {s.label}, list {s.plural} by {{order}} from now on.")),
            self.template("play_stop", objective="operate", difficulty=3, budget=14,
                          sample=extend(self.pick_where(lambda r: r["media"]), sample_plays), checks=played,
                          expected=lambda p: [self.path(p, "plays"), f"{s.name}.playing"],
                          instructions=(f'Play the {s.media_kind.lower()} "{{title}}", then stop it.',
                                        f'Listen to "{{title}}" in {s.label} and stop the playback.')),
        ]


def folder_templates_for(spec: FolderSpec) -> list[TaskTemplate]:
    """Every pretraining template of one folders app."""
    family = _Family(spec)
    return (family.navigation() + family.long_press() + family.bin_families() + family.forms() + family.queries()
            + family.operations())
