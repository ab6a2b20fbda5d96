"""Task families of the conversations apps (`phonesim.pretrain.conversations`), worded with each app's own
nouns: send a line to someone in their thread, or to someone without one through the new-thread picker;
reply in the thread that mentions a topic; read the last line someone wrote (off the list or the thread);
count the unread threads (the list header); mark a thread read or delete it (the thread's long-press menu,
the delete confirmed); open a person's page from the list, or by searching the people (the shorter way for
people far down); read a person's handle or group; change a handle (the edit form: clear, type, save); star
or block a person (the person's long-press menu, the block confirmed). Split "pretrain" like every
pretraining family; the solver plays them and their judges verify them as the target templates'.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.answers import AnswerSpec, match_answer
from phonesim.pretrain.conversations import (SEARCH_FROM, ConvoSpec, get_person, get_thread, handle_of, people_list,
                                             thread_list)
from phonesim.pretrain.templating import AppFamily
from phonesim.records import Lookup
from phonesim.task_template import Params, TaskTemplate, extend
from phonesim.variety import recount, regroup


def _last_from_them(thread: dict[str, Any]) -> str | None:
    said = [m["text"] for m in thread["said"] if m["from"] == "them"]
    return said[-1] if said else None


class _Family(AppFamily):
    """Template helpers for one conversations app."""

    def __init__(self, spec: ConvoSpec):
        super().__init__(spec.name, Lookup(spec.name, people_list, get_person, overlay_key="people"), "pid")
        self.threads = Lookup(spec.name, thread_list, get_thread, overlay_key="threads")
        self.spec = spec

    # --- sampling and reading ------------------------------------------------------------------
    def pick_person(self, first: int = 0) -> Callable[[random.Random, Any], Params]:
        """A sampler of one person at place `first` or later in the people list: their id and name."""
        def sample(rng: random.Random, phone: Any) -> Params:
            rec = rng.choice(self.items.records(phone)[first:])
            return {"pid": rec["id"], "name": rec["title"]}
        return sample

    def pick_thread(self, keep: Callable[[dict[str, Any]], bool] = lambda t: True):
        """A sampler of one thread `keep` accepts: its person's id and name."""
        def sample(rng: random.Random, phone: Any) -> Params:
            t = rng.choice([t for t in self.threads.records(phone) if keep(t)])
            return {"pid": t["id"], "name": self.items.attr(phone, t["id"], "title")}
        return sample

    def pick_stranger(self, rng: random.Random, phone: Any) -> Params:
        """A person without a thread (reached through the new-thread picker)."""
        talked = {t["id"] for t in self.threads.records(phone)}
        rec = rng.choice([r for r in self.items.records(phone) if r["id"] not in talked])
        return {"pid": rec["id"], "name": rec["title"]}

    def with_text(self, base: Callable[[random.Random, Any], Params]) -> Callable[[random.Random, Any], Params]:
        return extend(base, lambda rng, phone, p: {"text": rng.choice(self.spec.new_titles)})

    def sent(self, phone: Any, p: Params) -> list[tuple[str, bool]]:
        t = self.threads.record(phone, p["pid"])
        return [("sent", t is not None and any(m["from"] == "me" and m["text"] == p["text"] for m in t["said"]))]

    def path(self, p: Params, key: str = "") -> str:
        """The judge's data path of the task's person (or of one of their fields)."""
        return f"{self.name}.people.{p['pid']}" + (f".{key}" if key else "")

    def thread_path(self, p: Params, key: str = "") -> str:
        return f"{self.name}.threads.{p['pid']}" + (f".{key}" if key else "")

    # --- families ------------------------------------------------------------------------------
    def sending(self) -> list[TaskTemplate]:
        s = self.spec

        def mentioned(rng: random.Random, phone: Any) -> Params:
            t = rng.choice(self.threads.records(phone))
            return {"pid": t["id"], "topic": t["topic"], "text": rng.choice(s.new_titles)}

        return [
            self.template("send", objective="operate", difficulty=2, budget=15, checks=self.sent,
                          sample=self.with_text(self.pick_thread()), expected=lambda p: [self.thread_path(p)],
                          hints=lambda p: [p["name"], p["text"]],
                          instructions=(f'Write "{{text}}" to {{name}} in {s.label}.',
                                        f'In the {s.noun} with {{name}}, send "{{text}}".')),
            self.template("send_new", objective="operate", difficulty=3, budget=18,
                          sample=self.with_text(self.pick_stranger), checks=self.sent,
                          expected=lambda p: [self.thread_path(p)], hints=lambda p: [p["name"], p["text"]],
                          instructions=(f'Open a new {s.noun} with {{name}} and say "{{text}}".',
                                        f'{{name}} has no {s.noun} in {s.label} yet: start one with "{{text}}".')),
            self.template("reply_topic", objective="operate", difficulty=3, budget=15, sample=mentioned,
                          checks=self.sent, expected=lambda p: [self.thread_path(p)],
                          hints=lambda p: [p["topic"], p["text"]],
                          instructions=(f'Somebody brought up {{topic}}; answer "{{text}}" in that {s.noun}.',
                                        f'Reply "{{text}}" in the {s.noun} where {{topic}} came up.')),
        ]

    def threads_kept(self) -> list[TaskTemplate]:
        s = self.spec

        def unread_count(phone: Any, p: Params) -> AnswerSpec:
            return AnswerSpec("number", float(sum(1 for t in self.threads.records(phone) if t["unread"])),
                              hint="a number")

        def sample_count(rng: random.Random, phone: Any) -> Params:
            ending = [t for t in self.threads.records(phone) if t["said"][-1]["from"] == "them"]
            return recount(rng, [t["id"] for t in ending if t["unread"]], [t["id"] for t in ending if not t["unread"]],
                           0, len(ending))

        return [
            self.template("count_unread", objective="query", difficulty=1, budget=8, sample=sample_count,
                          setup=regroup(self.threads, lambda p: {"unread": 1}, lambda p: {"unread": 0}),
                          answer=unread_count, evidence=lambda p, spec: [f"{spec.gold:g} unread"],
                          instructions=(f"How many {s.plural} in {s.label} have lines I have not read?",
                                        f"Count the unread {s.plural}.")),
            self.template("mark_read", objective="operate", difficulty=2, budget=10, sample=self.pick_thread(),
                          setup=lambda phone, p: self.threads.edit(phone, p["pid"], unread=2),
                          checks=lambda phone, p: [("read", self.threads.attr(phone, p["pid"], "unread") == 0)],
                          expected=lambda p: [self.thread_path(p, "unread")],
                          instructions=(f"Mark the {s.noun} with {{name}} as read.",
                                        f"Clear the unread badge of {{name}}'s {s.noun}.")),
            self.template("delete_thread", objective="operate", difficulty=2, budget=10, sample=self.pick_thread(),
                          checks=lambda phone, p: [("deleted", self.threads.record(phone, p["pid"]) is None)],
                          expected=lambda p: [self.thread_path(p)],
                          instructions=(f"Throw away my {s.noun} with {{name}}.",
                                        f"Delete the whole {s.noun} with {{name}} from {s.label}.")),
            self.template("read_last", objective="query", difficulty=2, budget=10, composition="deep_dive",
                          sample=self.pick_thread(lambda t: self.readable(_last_from_them(t))),
                          answer=lambda phone, p: AnswerSpec(
                              "text", _last_from_them(self.threads.record(phone, p["pid"])),
                              hint="the line as written"),
                          evidence=lambda p, spec: [f"{p['name']}\n{spec.gold}",
                                                    f"{spec.gold}\n{p['name'].split()[0]} ·"],
                          instructions=(f"What was the last thing {{name}} wrote to me in {s.label}?",
                                        "Read me the latest line from {name}.")),
        ]

    @staticmethod
    def readable(line: str | None) -> bool:
        """Whether a line can be a typed answer (a question mark or a hedge word would fail any answer)."""
        return line is not None and match_answer(AnswerSpec("text", line), line)[0]

    def people_kept(self) -> list[TaskTemplate]:
        s, hl, gl = self.spec, self.spec.handle_label, self.spec.group.label

        def opened(phone: Any, p: Params) -> list:
            return [("open", self.on_page(phone, "person", pid=p["pid"]))]

        def new_handle(rng: random.Random, phone: Any, p: Params) -> Params:
            taken = {r["handle"] for r in self.items.records(phone)}
            return {"handle": rng.choice([h for n in range(10, 100)
                                          if (h := handle_of(s, p["name"], n)) not in taken])}

        def flag_set(key: str):
            return lambda phone, p: [(key, self.items.attr(phone, p["pid"], key) is True)]

        return [
            self.template("open_person", objective="operate", difficulty=1, budget=10, sample=self.pick_person(),
                          checks=opened, instructions=(f"Show {{name}}'s page in {s.label}.",
                                                       f"Go to the {s.person} {{name}}.")),
            self.template("search_person", objective="operate", difficulty=2, budget=10,
                          sample=self.pick_person(SEARCH_FROM), checks=opened, hints=lambda p: [p["name"]],
                          instructions=(f"Search the {s.people} for {{name}} and open their page.",
                                        f"Look for {{name}} among the {s.people} of {s.label} and bring them up.")),
            self.template("query_handle", objective="query", difficulty=2, budget=10, composition="deep_dive",
                          sample=self.pick_person(),
                          answer=lambda phone, p: AnswerSpec("text", self.items.attr(phone, p["pid"], "handle"),
                                                             hint=f"the {hl.lower()}"),
                          evidence=lambda p, spec: [f"{hl}\n{spec.gold}", f"{p['name']}\n{spec.gold}"],
                          instructions=(f"Which {hl.lower()} does {{name}} use?",
                                        f"Tell me the {hl.lower()} of {{name}} in {s.label}.")),
            self.template("query_group", objective="query", difficulty=2, budget=10, composition="deep_dive",
                          sample=self.pick_person(),
                          answer=lambda phone, p: AnswerSpec("choice", self.items.attr(phone, p["pid"], "group"),
                                                             choices=s.group.values, hint=f"the {gl.lower()}"),
                          evidence=lambda p, spec: [f"{gl}\n{spec.gold}", f"{p['name']}\n{spec.gold}"],
                          instructions=(f"Which {gl.lower()} does {{name}} belong to?",
                                        f"Name the {gl.lower()} that {{name}} is part of.")),
            self.template("edit_handle", objective="operate", difficulty=3, budget=18, composition="deep_dive",
                          sample=extend(self.pick_person(), new_handle), hints=lambda p: [p["handle"]],
                          checks=lambda phone, p: [("handle",
                                                    self.items.attr(phone, p["pid"], "handle") == p["handle"])],
                          expected=lambda p: [self.path(p, "handle")],
                          instructions=(f"Set the {hl.lower()} of {{name}} to {{handle}}.",
                                        f"{{name}} goes by {{handle}} now: update it in {s.label}.")),
            self.template("star", objective="operate", difficulty=2, budget=10, sample=self.pick_person(),
                          setup=self.set_field("starred", False), checks=flag_set("starred"),
                          expected=lambda p: [self.path(p, "starred")],
                          instructions=(f"Mark {{name}} as {s.starred_word.lower()} in {s.label}.",
                                        f"I want {{name}} among my {s.starred_word.lower()} {s.people}.")),
            self.template("block", objective="operate", difficulty=2, budget=12, sample=self.pick_person(),
                          setup=self.set_field("blocked", False), checks=flag_set("blocked"),
                          expected=lambda p: [self.path(p, "blocked")],
                          instructions=(f"{s.block_word} {{name}} in {s.label}.",
                                        f"Stop {{name}} from reaching me here: {s.block_word.lower()} them.")),
        ]


def convo_templates_for(spec: ConvoSpec) -> list[TaskTemplate]:
    """Every pretraining template of one conversations app."""
    family = _Family(spec)
    return family.sending() + family.threads_kept() + family.people_kept()
