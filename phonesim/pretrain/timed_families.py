"""Task families of the timed-entry apps (`phonesim.pretrain.timed`), worded with each app's own nouns:
turn an entry on by its time or off by its title (the row's switch), open one by its time (the list) or
find one by its title (the search field, the shorter way for entries far down), add one (its time typed
as HH:MM, its title, then its days as chips or its date typed as YYYY-MM-DD), change its time (clear the
field, type), delete or duplicate it (the row's long-press menu, the delete confirmed), read its time,
its attribute or its day / date off its page, count the entries that are on (the list header), and read
a time then turn the entry off. Split "pretrain" like every pretraining family; the solver plays them and
their judges verify them as the target templates'.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.answers import AnswerSpec
from phonesim.dates import long_date, short_date
from phonesim.pretrain.collection import get_item
from phonesim.pretrain.templating import AppFamily
from phonesim.pretrain.timed import DATES, SEARCH_FROM, WEEKDAYS, TimedSpec, entries
from phonesim.records import Lookup
from phonesim.task_template import Params, TaskTemplate, extend
from phonesim.variety import recount, regroup

TIME_HINT = "a time (HH:MM, 24-hour)"  # the answer formats every world's instructions append
DATE_HINT = "a date (YYYY-MM-DD)"


class _Family(AppFamily):
    """Template helpers for one timed-entry app."""

    def __init__(self, spec: TimedSpec):
        super().__init__(spec.name, Lookup(spec.name, entries, get_item, overlay_key="items"), "eid")
        self.spec = spec

    # --- sampling and reading ------------------------------------------------------------------
    def pick_from(self, first: int = 0) -> Callable[[random.Random, Any], Params]:
        """A sampler of one entry at place `first` or later in the home list: its id, title and time."""
        def sample(rng: random.Random, phone: Any) -> Params:
            rec = rng.choice(self.items.records(phone)[first:])
            return {"eid": rec["id"], "title": rec["title"], "time": rec["time"]}
        return sample

    def free_time(self, rng: random.Random, phone: Any) -> str:
        """A time no entry has (so that a time names one entry)."""
        taken = {r["time"] for r in self.items.records(phone)}
        return rng.choice([t for t in self.spec.slots if t not in taken])

    def created(self, phone: Any, p: Params, title: str) -> list[dict[str, Any]]:
        """Entries made during the task (ids "n…") with this title and the task's time."""
        return [r for r in self.items.records(phone) if r["id"].startswith("n") and r["title"] == title
                and r["time"] == p["time"]]

    # --- families ------------------------------------------------------------------------------
    def switches(self) -> list[TaskTemplate]:
        s, pick = self.spec, self.pick_from()
        on = s.on_word.lower()

        def is_on(value: bool):
            return lambda phone, p: [("on", self.items.attr(phone, p["eid"], "on") is value)]

        return [
            self.template("switch_on", objective="operate", difficulty=1, budget=12, sample=pick,
                          setup=self.set_field("on", False), checks=is_on(True),
                          expected=lambda p: [self.path(p, "on")],
                          instructions=(f"Activate the {s.noun} at {{time}}.",
                                        f"In {s.label}, the {{time}} {s.noun} should be {on} again.")),
            self.template("switch_off", objective="operate", difficulty=1, budget=12, sample=pick,
                          setup=self.set_field("on", True), checks=is_on(False),
                          expected=lambda p: [self.path(p, "on")],
                          instructions=(f'Deactivate the {s.noun} "{{title}}".',
                                        f'In {s.label}, flip "{{title}}" to off.')),
        ]

    def navigation(self) -> list[TaskTemplate]:
        s = self.spec

        def opened(phone, p) -> list:
            return [("open", self.on_page(phone, "entry", eid=p["eid"]))]

        return [
            self.template("open_entry", objective="operate", difficulty=1, budget=12, sample=self.pick_from(),
                          checks=opened, instructions=(f"Show me the {s.noun} at {{time}}.",
                                                       f"Bring up the details of the {{time}} {s.noun}.")),
            self.template("search_open", objective="operate", difficulty=2, budget=12,
                          sample=self.pick_from(SEARCH_FROM), checks=opened, hints=lambda p: [p["title"]],
                          instructions=(f'Look up the {s.noun} "{{title}}" and open it.',
                                        f'Find "{{title}}" among the {s.plural} of {s.label} and show it.')),
        ]

    def forms(self) -> list[TaskTemplate]:
        s = self.spec

        def sample_new(rng, phone) -> Params:
            return {"new": rng.choice(s.new_titles), "time": self.free_time(rng, phone)}

        def added(phone, p) -> list:
            made = self.created(phone, p, p["new"])
            return [("added", bool(made)), ("on", any(r["on"] for r in made))]

        def new_time(rng, phone, p) -> Params:
            return {"new_time": self.free_time(rng, phone)}

        out = [
            self.template("add", objective="operate", difficulty=2, budget=20, sample=sample_new, checks=added,
                          expected=lambda p: [f"{s.name}.items.n*"], hints=lambda p: [p["time"], p["new"]],
                          instructions=(f'Create a {s.noun} named "{{new}}" for {{time}}.',
                                        f'{s.label} needs a new {s.noun} at {{time}}: "{{new}}".')),
            self.template("change_time", objective="operate", difficulty=3, budget=20, composition="deep_dive",
                          sample=extend(self.pick_from(), new_time), hints=lambda p: [p["new_time"]],
                          checks=lambda phone, p: [("time", self.items.attr(phone, p["eid"], "time") == p["new_time"])],
                          expected=lambda p: [self.path(p, "time")],
                          instructions=(f'Change the time of the {s.noun} "{{title}}" to {{new_time}}.',
                                        f'"{{title}}" in {s.label} should be at {{new_time}} from now on.')),
        ]
        if s.schedule == "days":
            def sample_days(rng, phone) -> Params:
                first, second = sorted(rng.sample(WEEKDAYS, 2), key=WEEKDAYS.index)
                return {**sample_new(rng, phone), "day1": first, "day2": second}

            out.append(self.template(
                "add_days", objective="operate", difficulty=3, budget=22, sample=sample_days,
                checks=lambda phone, p: added(phone, p) + [
                    ("days", any(r["days"] == [p["day1"], p["day2"]] for r in self.created(phone, p, p["new"])))],
                expected=lambda p: [f"{s.name}.items.n*"], hints=lambda p: [p["time"], p["new"]],
                instructions=(f'Add a {s.noun} "{{new}}" at {{time}} for every {{day1}} and {{day2}}.',
                              f'In {s.label}, set up "{{new}}" at {{time}}; it repeats on {{day1}} and {{day2}}.')))
        else:
            def sample_date(rng, phone) -> Params:
                iso = rng.choice(DATES[1:])
                return {**sample_new(rng, phone), "date": iso, "date_long": long_date(iso)}

            out.append(self.template(
                "add_dated", objective="operate", difficulty=3, budget=22, sample=sample_date,
                checks=lambda phone, p: added(phone, p) + [
                    ("date", any(r["date"] == p["date"] for r in self.created(phone, p, p["new"])))],
                expected=lambda p: [f"{s.name}.items.n*"], hints=lambda p: [p["time"], p["date"], p["new"]],
                instructions=(f'Put a {s.noun} "{{new}}" into {s.label} for {{date_long}}, {{time}}.',
                              f'Add "{{new}}" as a {s.noun} at {{time}} on {{date_long}}.')))
        return out

    def long_press(self) -> list[TaskTemplate]:
        s, pick = self.spec, self.pick_from()
        return [
            self.template("delete", objective="operate", difficulty=2, budget=15, sample=pick,
                          checks=lambda phone, p: [("deleted", self.items.record(phone, p["eid"]) is None)],
                          expected=lambda p: [self.path(p)],
                          instructions=(f'Delete the {s.noun} "{{title}}".',
                                        f"Get rid of the {{time}} {s.noun} in {s.label}.")),
            self.template("duplicate", objective="operate", difficulty=2, budget=15, sample=pick,
                          checks=lambda phone, p: [("copied", bool(self.created(phone, p, p["title"])))],
                          expected=lambda p: [f"{s.name}.items.n*"],
                          instructions=(f'Make a second {s.noun} just like "{{title}}".',
                                        f"Copy the {{time}} {s.noun} in {s.label}.")),
        ]

    def queries(self) -> list[TaskTemplate]:
        s, a, pick = self.spec, self.spec.attribute, self.pick_from()

        def time_answer(phone, p) -> AnswerSpec:
            return AnswerSpec("time", self.items.attr(phone, p["eid"], "time"), hint=TIME_HINT)

        def time_evidence(p, spec) -> list[str]:
            return [f"{spec.gold}\n{p['title']} ·", f"{s.time_label}\n{spec.gold}"]

        def attribute_answer(phone, p) -> AnswerSpec:
            value = self.items.attr(phone, p["eid"], a.key)
            if a.numeric:
                return AnswerSpec("number", float(value), hint="a number")
            return AnswerSpec("text", value, hint=f"the {a.label.lower()}")

        def sample_count(rng, phone) -> Params:
            recs = self.items.records(phone)
            return recount(rng, [r["id"] for r in recs if r["on"]], [r["id"] for r in recs if not r["on"]],
                           0, len(recs))

        on = s.on_word.lower()
        return [
            self.template("query_time", objective="query", difficulty=1, budget=12, sample=pick,
                          answer=time_answer, evidence=time_evidence,
                          instructions=(f'At what time is the {s.noun} "{{title}}"?',
                                        f'Which time does {s.label} show for "{{title}}"?')),
            self.template("query_count", objective="query", difficulty=2, budget=10, sample=sample_count,
                          setup=regroup(self.items, lambda p: {"on": True}, lambda p: {"on": False}),
                          answer=lambda phone, p: AnswerSpec(
                              "number", float(sum(r["on"] for r in self.items.records(phone))), hint="a number"),
                          evidence=lambda p, spec: [f"{spec.gold:g} of "],
                          instructions=(f"How many {s.plural} are {on} in {s.label}?",
                                        f"Count the {s.plural} that are {on} right now.")),
            self.template(f"query_{a.key}", objective="query", difficulty=2, budget=12, composition="deep_dive",
                          sample=pick, answer=attribute_answer,
                          evidence=lambda p, spec: [f"{a.label}\n{a.show(int(spec.gold) if a.numeric else spec.gold)}"],
                          instructions=(f'What {a.label.lower()} does the {s.noun} "{{title}}" have?',
                                        f"Tell me the {a.label.lower()} of the {{time}} {s.noun}.")),
            self.schedule_query(),
            self.template("query_then_off", objective="hybrid", difficulty=3, budget=16, sample=pick,
                          setup=self.set_field("on", True), answer=time_answer, evidence=time_evidence,
                          checks=lambda phone, p: [("off", self.items.attr(phone, p["eid"], "on") is False)],
                          expected=lambda p: [self.path(p, "on")],
                          instructions=(f'Say at what time "{{title}}" is, then deactivate that {s.noun}.',)),
        ]

    def schedule_query(self) -> TaskTemplate:
        """Which day a repeating entry is on (set to one day), or a dated entry's date."""
        s = self.spec
        if s.schedule == "date":
            def date_answer(phone, p) -> AnswerSpec:
                return AnswerSpec("date", self.items.attr(phone, p["eid"], "date"), hint=DATE_HINT)

            return self.template(
                "query_date", objective="query", difficulty=2, budget=12, composition="deep_dive",
                sample=self.pick_from(), answer=date_answer,
                evidence=lambda p, spec: [long_date(spec.gold), f"{p['title']} · {short_date(spec.gold)}"],
                instructions=(f'On what date is the {s.noun} "{{title}}"?', f"Which date has the {{time}} {s.noun}?"))

        def sample_day(rng, phone, p) -> Params:
            return {"day": rng.choice(WEEKDAYS)}

        return self.template(
            "query_day", objective="query", difficulty=2, budget=12, composition="deep_dive",
            sample=extend(self.pick_from(), sample_day), setup=lambda phone, p: self.items.edit(
                phone, p["eid"], days=[p["day"]]),
            answer=lambda phone, p: AnswerSpec("choice", p["day"], choices=WEEKDAYS,
                                               hint="one of " + ", ".join(WEEKDAYS)),
            evidence=lambda p, spec: [f"{s.schedule_label}\n{spec.gold}", f"{p['title']} · {spec.gold}"],
            instructions=(f'On which day of the week is the {s.noun} "{{title}}"?',
                          f"Which week day does the {{time}} {s.noun} repeat on?"))


def timed_templates_for(spec: TimedSpec) -> list[TaskTemplate]:
    """Every pretraining template of one timed-entry app."""
    family = _Family(spec)
    return family.switches() + family.navigation() + family.forms() + family.long_press() + family.queries()
