"""Task families of the pretraining world: the same families for every collection app, worded
with that app's own nouns, so that they exercise navigation through menus and lists (open a
record, a group, the preferences), opening and operating items (pin, flag, delete with its
confirmation), forms (edit a field, rename, create), toggles and choices (preferences), reading
an answer off a screen (a record's field, a group's count, the version) and two-part tasks
(read, then act). Every template has split "pretrain", never a target split; the solver plays
them and their judges verify them exactly as the target templates'.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.answers import AnswerSpec
from phonesim.dates import counted
from phonesim.pretrain.collection import Attribute, CollectionSpec, all_items, get_item
from phonesim.pretrain.templating import AppFamily, first_upper
from phonesim.records import Lookup
from phonesim.task_template import Params, TaskTemplate, extend


class _Family(AppFamily):
    """Template helpers for one collection app: sampling, state reads and the templates themselves."""

    def __init__(self, spec: CollectionSpec):
        super().__init__(spec.name, Lookup(spec.name, all_items, get_item, overlay_key="items"), "rid")
        self.spec = spec

    # --- sampling and reading ------------------------------------------------------------------
    def other_value(self, attribute: Attribute) -> Callable[[random.Random, Any, Params], Params]:
        def add(rng: random.Random, phone: Any, p: Params) -> Params:
            now = self.items.attr(phone, p["rid"], attribute.key)
            value = attribute.draw(rng)
            while value == now:
                value = attribute.draw(rng)
            return {"value": value, "shown": attribute.show(value)}
        return add

    def other_group(self, rng: random.Random, phone: Any, p: Params) -> Params:
        now = self.items.attr(phone, p["rid"], "group")
        return {"grp": rng.choice([g for g in self.spec.group.values if g != now])}

    # --- families ------------------------------------------------------------------------------
    def navigation(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_group(rng, phone) -> Params:
            return {"grp": rng.choice(s.group.values)}

        return [
            self.template("open_item", objective="operate", difficulty=1, budget=12, sample=self.pick,
                          instructions=(f'Open the {s.noun} "{{title}}".', f"Show me {{title}} in {s.label}.",
                                        f'Go to the page of the {s.noun} "{{title}}".'),
                          checks=lambda phone, p: [("open", self.on_page(phone, "item", rid=p["rid"]))],
                          hints=lambda p: [p["title"]]),
            self.template("open_group", objective="operate", difficulty=1, budget=12, sample=sample_group,
                          instructions=(f"Show all {s.plural} in {{grp}}.", f"In {s.label}, open {{grp}}.",
                                        f"List the {s.plural} of {{grp}}."),
                          checks=lambda phone, p: [("open", self.on_page(phone, "group", grp=p["grp"]))]),
            self.template("open_prefs", objective="operate", difficulty=1, budget=10, sample=lambda rng, phone: {},
                          instructions=(f"Open the preferences of {s.label}.", f"Show {s.label}'s preferences."),
                          checks=lambda phone, p: [("open", self.on_page(phone, "prefs"))]),
        ]

    def set_to(self, family: str, key: str, value: bool, difficulty: int, instructions: tuple[str, ...]
               ) -> TaskTemplate:
        """Set a record's boolean field `key` to `value` (it starts the other way)."""
        return self.template(
            family, objective="operate", difficulty=difficulty, budget=12, sample=self.pick,
            setup=self.set_field(key, not value), instructions=instructions,
            checks=lambda phone, p: [(key, self.items.attr(phone, p["rid"], key) is value)],
            expected=lambda p: [self.path(p, key)], hints=lambda p: [p["title"]])

    def operations(self) -> list[TaskTemplate]:
        s = self.spec
        unpin = first_upper(f"un{s.pin.lower()}")
        out = [
            self.set_to("pin", "pin", True, 1, (f'{s.pin} the {s.noun} "{{title}}".',
                                                 f"{s.pin} {{title}} in {s.label}.")),
            self.set_to("unpin", "pin", False, 2, (f'{unpin} the {s.noun} "{{title}}".',
                                                   f"{unpin} {{title}}; it should not be {s.pinned.lower()}.")),
            self.set_to("flag_on", "flag", True, 1, (f"{first_upper(s.flag_on)}.", f"In {s.label}, {s.flag_on}.",
                                                     f'Set "{s.flag}" for {{title}}.')),
            self.set_to("flag_off", "flag", False, 1, (f"{first_upper(s.flag_off)}.", f"In {s.label}, {s.flag_off}.",
                                                       f'Clear "{s.flag}" for {{title}}.')),
            self.template("delete", objective="operate", difficulty=2, budget=15, sample=self.pick,
                          instructions=(f'Delete the {s.noun} "{{title}}".', f"Remove {{title}} from {s.label}.",
                                        f'Get rid of the {s.noun} "{{title}}".'),
                          checks=lambda phone, p: [("deleted", self.items.record(phone, p["rid"]) is None)],
                          expected=lambda p: [self.path(p)], hints=lambda p: [p["title"]]),
            self.template("set_group", objective="operate", difficulty=2, budget=15,
                          sample=extend(self.pick, self.other_group),
                          instructions=(f'Move the {s.noun} "{{title}}" to {{grp}}.',
                                        f"Put {{title}} in {{grp}} ({s.label}).",
                                        f'Change the {s.group.label.lower()} of "{{title}}" to {{grp}}.'),
                          checks=lambda phone, p: [("group", self.items.attr(phone, p["rid"], "group") == p["grp"])],
                          expected=lambda p: [self.path(p, "group")], hints=lambda p: [p["title"]]),
        ]
        return out

    def preferences(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_option(on: bool):
            return lambda rng, phone: {"opt": rng.choice(s.options), "on": on}

        def setup_option(phone, p) -> None:
            phone.data(s.name)["options"][p["opt"]] = not p["on"]

        def option_is(phone, p) -> list:
            return [("option", phone.data(s.name)["options"][p["opt"]] is p["on"])]

        def sample_choice(rng, phone) -> Params:
            return {"value": rng.choice([c for c in s.choices if c != phone.data(s.name)["choice"]])}

        option_path = lambda p: [f"{s.name}.options.{p['opt']}"]  # noqa: E731
        return [
            self.template("option_on", objective="operate", difficulty=2, budget=12, sample=sample_option(True),
                          setup=setup_option, checks=option_is, expected=option_path,
                          instructions=(f'Turn on "{{opt}}" in {s.label}.',
                                        f"Enable {{opt}} in {s.label}'s preferences.")),
            self.template("option_off", objective="operate", difficulty=2, budget=12, sample=sample_option(False),
                          setup=setup_option, checks=option_is, expected=option_path,
                          instructions=(f'Turn off "{{opt}}" in {s.label}.',
                                        f"Disable {{opt}} in {s.label}'s preferences.")),
            self.template("set_choice", objective="operate", difficulty=2, budget=12, sample=sample_choice,
                          checks=lambda phone, p: [("choice", phone.data(s.name)["choice"] == p["value"])],
                          expected=lambda p: [f"{s.name}.choice"],
                          instructions=(f'Set "{s.choice}" to {{value}} in {s.label}.',
                                        f"In {s.label}, change {s.choice.lower()} to {{value}}.")),
        ]

    def forms(self) -> list[TaskTemplate]:
        s = self.spec
        out = []
        for a in s.attributes:
            out.append(self.template(
                f"edit_{a.key}", objective="operate", difficulty=3, budget=20, composition="deep_dive",
                sample=extend(self.pick, self.other_value(a)),
                instructions=(f'Change the {a.label.lower()} of "{{title}}" to {{shown}}.',
                              f"Set {{title}}'s {a.label.lower()} to {{shown}} in {s.label}."),
                checks=lambda phone, p, a=a: [(a.key, self.items.attr(phone, p["rid"], a.key) == p["value"])],
                expected=lambda p, a=a: [self.path(p, a.key)], hints=lambda p: [str(p["value"])]))

        def sample_rename(rng, phone) -> Params:
            return {**self.pick(rng, phone), "new": rng.choice(s.new_titles)}

        def sample_new(rng, phone) -> Params:
            p: Params = {"new": rng.choice(s.new_titles), "grp": rng.choice(s.group.values)}
            for a in s.attributes:
                if a.numeric:
                    p[a.key] = a.draw(rng)
            p["details"] = ", ".join(f"{a.label.lower()} {a.show(p[a.key])}" for a in s.attributes if a.numeric)
            return p

        def created(phone, p) -> list[dict]:
            return [r for r in self.items.records(phone) if r["id"].startswith("n") and r["title"] == p["new"]]

        out += [
            self.template("rename", objective="operate", difficulty=3, budget=20, sample=sample_rename,
                          instructions=(f'Rename the {s.noun} "{{title}}" to "{{new}}".',
                                        f'In {s.label}, give {{title}} the new title "{{new}}".'),
                          checks=lambda phone, p: [("title", self.items.attr(phone, p["rid"], "title") == p["new"])],
                          expected=lambda p: [self.path(p, "title")], hints=lambda p: [p["new"]]),
            self.template("create", objective="operate", difficulty=3, budget=25, sample=sample_new,
                          instructions=(f'Add a {s.noun} "{{new}}" to {{grp}} with {{details}}.',
                                        f'Create the {s.noun} "{{new}}" in {s.label} ({{grp}}; {{details}}).'),
                          checks=lambda phone, p: [("created", bool(created(phone, p))),
                                                   ("group", any(r["group"] == p["grp"] for r in created(phone, p)))],
                          expected=lambda p: [f"{s.name}.items.n*"],
                          hints=lambda p: [p["new"]] + [str(p[a.key]) for a in s.attributes if a.numeric]),
        ]
        return out

    def queries(self) -> list[TaskTemplate]:
        s = self.spec
        out = []
        for a in s.attributes:
            def answer(phone, p, a=a) -> AnswerSpec:
                value = self.items.attr(phone, p["rid"], a.key)
                if a.numeric:
                    return AnswerSpec("number", float(value), hint="a number")
                return AnswerSpec("text", value, hint=f"the {a.label.lower()}")

            out.append(self.template(
                f"query_{a.key}", objective="query", difficulty=2, budget=12, composition="deep_dive",
                sample=self.pick, answer=answer,
                evidence=lambda p, spec, a=a: [f"{a.label}\n{a.show(int(spec.gold) if a.numeric else spec.gold)}"],
                instructions=(f'What is the {a.label.lower()} of the {s.noun} "{{title}}"?',
                              f"Look up the {a.label.lower()} of {{title}} in {s.label}."),
                hints=lambda p: [p["title"]]))
            out.append(self.template(
                f"query_then_pin_{a.key}", objective="hybrid", difficulty=3, budget=16, sample=self.pick,
                setup=self.set_field("pin", False), answer=answer,
                evidence=lambda p, spec, a=a: [f"{a.label}\n{a.show(int(spec.gold) if a.numeric else spec.gold)}"],
                checks=lambda phone, p: [("pinned", self.items.attr(phone, p["rid"], "pin") is True)],
                expected=lambda p: [self.path(p, "pin")],
                instructions=(f'Tell me the {a.label.lower()} of "{{title}}", then {s.pin.lower()} it.',),
                hints=lambda p: [p["title"]]))

        def sample_group(rng, phone) -> Params:
            return {"grp": rng.choice(s.group.values)}

        def group_count(phone, p) -> AnswerSpec:
            n = sum(r["group"] == p["grp"] for r in self.items.records(phone))
            return AnswerSpec("number", float(n), hint="a number")

        out += [
            self.template("query_group_count", objective="query", difficulty=2, budget=12, sample=sample_group,
                          answer=group_count,
                          evidence=lambda p, spec: [f"{p['grp']}\n{counted(int(spec.gold), s.noun, s.plural)}"],
                          instructions=(f"How many {s.plural} are in {{grp}}?",
                                        f"Count the {s.plural} in {{grp}} ({s.label}).")),
            self.template("query_version", objective="query", difficulty=2, budget=10, sample=lambda rng, phone: {},
                          answer=lambda phone, p: AnswerSpec("text", s.version, hint="the version number"),
                          evidence=lambda p, spec: [f"Version\n{spec.gold}"],
                          instructions=(f"Which version of {s.label} is installed?",
                                        f"Find the version number of {s.label}.")),
            self.template("query_then_delete", objective="hybrid", difficulty=3, budget=20, sample=self.pick,
                          answer=lambda phone, p: AnswerSpec("text", self.items.attr(phone, p["rid"], "group"),
                                                             hint=f"the {s.group.label.lower()}"),
                          evidence=lambda p, spec: [f"{s.group.label}\n{spec.gold}"],
                          checks=lambda phone, p: [("deleted", self.items.record(phone, p["rid"]) is None)],
                          expected=lambda p: [self.path(p)],
                          instructions=(f'Tell me the {s.group.label.lower()} of "{{title}}", then delete it.',),
                          hints=lambda p: [p["title"]]),
        ]
        return out


def templates_for(spec: CollectionSpec) -> list[TaskTemplate]:
    """Every pretraining template of one collection app."""
    family = _Family(spec)
    return family.navigation() + family.operations() + family.preferences() + family.forms() + family.queries()
