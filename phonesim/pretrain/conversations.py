"""The pretraining world's third app kind: *conversations* apps (chats with people, and the people
themselves), built from one declarative `ConvoSpec` — the target's kind of messaging and people apps
under names, layouts and entities of its own (docs/base-ceiling.md, R8b).

- the home list of threads: per thread the person, the last line ("You: …" when it was mine), an
  unread badge or the day of the last line; a header "N unread"; a search field over names and
  lines; a long press opens the thread's menu (mark as read, delete — nowhere else); a floating
  button starts a new thread;
- a thread: message bubbles (who · when), a compose field and a send button (above the bubbles,
  newest first, or below them, oldest first);
- the recipient picker of a new thread: a field that searches the people, a row per match;
- the people list (a tab of the home screen, or a screen behind an app-bar icon): rows that open a
  person's page, a long press for the person's menu (star, block, delete; block and delete confirmed);
- a person's page: handle and group to read, actions to message and edit; the edit form (name and
  handle typed, the group a choice dialog);
- a toast after every change, the only sign that a task is done.

Widgets, dialogs, toasts and the record overlay are phonesim's own, as in the other kinds. Messages
carry the day (days ago) and time they were written, never a calendar date: the target's messages
carry dates, and the two worlds share the simulated today. Six layout knobs vary what sits where.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, App, Screen, Transition
from phonesim.context import Ctx
from phonesim.dates import TODAY, counted, minutes
from phonesim.pretrain.collection import Attribute, check_layout, searched
from phonesim.widgets import (Page, action_bar, button, fab, field_row, header, hero, icon_button, info, item,
                              paragraph, tabs, tap)

PEOPLE_STYLES = ("tab", "icon")  # the people list: a tab of the home screen, or a screen behind an app-bar icon
COMPOSE_STYLES = ("top", "bottom")  # the compose field above the bubbles (newest first) or below (oldest first)
PICKER_STYLES = ("all", "suggest")  # the recipient picker lists everyone, or only the people matching the field
PERSON_STYLES = ("bar", "buttons")  # a person's actions: round buttons under the name, or buttons below the values
SUB_LINES = ("handle", "group")  # what a people row's second line shows
BADGES = ("count", "new")  # an unread thread's badge: "2", or "2 new"
HANDLES = {  # how a handle is made from a name and a number, and what the edit form accepts
    "at": (lambda first, last, n: f"@{first}.{last[0]}{n}", r"@[a-z]+\.[a-z]\d{2}"),
    "tilde": (lambda first, last, n: f"{first[:5]}~{n:02d}", r"[a-z]+~\d{2}"),
    "code": (lambda first, last, n: f"{first[0].upper()}{last[0].upper()}-{1000 + 37 * n:04d}", r"[A-Z]{2}-\d{4}"),
}
HANDLE_HINTS = {"at": "@name.x00", "tilde": "name~00", "code": "AB-0000"}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
THREADS = 12  # people with a thread in the world; the others are reached through the picker
# People from this place on in the people list need two swipes to reach (search field, header, 72 dp rows), so
# typing into the people search is the shorter way.
SEARCH_FROM = 14


@dataclass(frozen=True)
class ConvoSpec:
    """One conversations app: identity, the words it uses, its people and lines, and its layout."""

    name: str
    label: str
    package: str
    color: str
    glyph: str
    noun: str  # one thread, as instructions name it ("chat")
    plural: str
    person: str  # one person ("pal")
    people: str
    titles: tuple[str, ...]  # the people's names ("first last"), one each
    new_titles: tuple[str, ...]  # lines a send task asks for (never in the world)
    lines: tuple[str, ...]  # what the world's messages say
    mentions: tuple[str, ...]  # lines with "{topic}": each thread says its own topic once
    topics: tuple[str, ...]  # one per thread
    group: Attribute  # the group a person is in, a choice
    handle_label: str = "Handle"
    handle_style: str = "at"
    me_word: str = "You"
    compose_label: str = "Reply"
    send_word: str = "Send"
    message_word: str = "Message"  # the person page's action that opens the thread
    read_word: str = "Mark as read"
    delete_word: str = "Delete"
    star_word: str = "Star"
    starred_word: str = "Starred"
    block_word: str = "Block"
    blocked_word: str = "Blocked"
    sent_toast: str = "Sent"
    people_at: str = "tab"
    compose: str = "top"
    picker: str = "all"
    person_actions: str = "bar"
    sub_line: str = "handle"
    badge: str = "count"

    def __post_init__(self) -> None:
        check_layout(self.name, (self.people_at, PEOPLE_STYLES), (self.compose, COMPOSE_STYLES),
                     (self.picker, PICKER_STYLES), (self.person_actions, PERSON_STYLES), (self.sub_line, SUB_LINES),
                     (self.badge, BADGES), (self.handle_style, tuple(HANDLES)))
        if len(set(self.titles)) != len(self.titles) or any(len(t.split()) != 2 for t in self.titles):
            raise ValueError(f"app {self.name}: people need distinct two-word names")
        if len(self.titles) < SEARCH_FROM + 4:
            raise ValueError(f"app {self.name}: {len(self.titles)} people leave none to search for")
        if len(self.topics) < THREADS or len(set(self.topics)) != len(self.topics):
            raise ValueError(f"app {self.name}: give {THREADS} distinct topics")
        if set(self.new_titles) & set(self.lines) or len(self.lines) < 6 or not self.mentions:
            raise ValueError(f"app {self.name}: lines repeat a line to send, or too few lines")
        if self.group.numeric:
            raise ValueError(f"app {self.name}: a group is a choice of words")


def handle_of(spec: ConvoSpec, name: str, n: int) -> str:
    first, last = name.lower().replace("-", "").split()
    return HANDLES[spec.handle_style][0](first, last, n)


def valid_handle(spec: ConvoSpec, text: str) -> bool:
    return re.fullmatch(HANDLES[spec.handle_style][1], text) is not None


# --- world ---------------------------------------------------------------------------------------

def _thread(spec: ConvoSpec, rng: random.Random, pid: str, topic: str) -> dict[str, Any]:
    n = rng.randint(3, 5)
    said = rng.sample(spec.lines, n - 1)
    said.insert(rng.randrange(n), rng.choice(spec.mentions).format(topic=topic))
    first = rng.choice(("them", "me"))
    who = [first if i % 2 == 0 else ("me" if first == "them" else "them") for i in range(n)]
    if rng.random() < 0.7:  # most threads end with their line
        who[-1] = "them"
    ago, start = rng.randint(1, 6), rng.randrange(8 * 60, 20 * 60)
    times = sorted(rng.sample(range(start, start + 180), n))
    msgs = [{"from": w, "text": t, "day": ago, "time": f"{m // 60:02d}:{m % 60:02d}"}
            for w, t, m in zip(who, said, times)]
    unread = rng.choice((0, 0, 1, 2)) if who[-1] == "them" else 0
    return {"id": pid, "said": msgs, "unread": unread, "topic": topic}


def make_world_fn(spec: ConvoSpec):
    def make_world(seed: int) -> dict[str, Any]:
        rng = random.Random(f"{spec.name}:{seed}")
        numbers = rng.sample(range(10, 100), len(spec.titles))
        people = {f"p{i}": {"id": f"p{i}", "title": name, "handle": handle_of(spec, name, numbers[i - 1]),
                            "group": spec.group.draw(rng), "starred": rng.random() < 0.25, "blocked": False}
                  for i, name in enumerate(spec.titles, start=1)}
        talkers = rng.sample(sorted(people), THREADS)
        topics = rng.sample(spec.topics, THREADS)
        return {"people": people, "threads": {pid: _thread(spec, rng, pid, t) for pid, t in zip(talkers, topics)}}
    return make_world


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"people": records.overlay(), "threads": records.overlay()}


def get_person(world: dict[str, Any], data: dict[str, Any], pid: str) -> dict[str, Any] | None:
    return records.get(world["people"], data["people"], pid)


def people_list(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The people as the people list shows them: by name."""
    return sorted(records.merged(world["people"], data["people"]), key=lambda r: (r["title"], r["id"]))


def get_thread(world: dict[str, Any], data: dict[str, Any], pid: str) -> dict[str, Any] | None:
    return records.get(world["threads"], data["threads"], pid)


def thread_list(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The threads as the home list shows them: the latest line first (only threads with lines, of people
    still there)."""
    live = [t for t in records.merged(world["threads"], data["threads"])
            if t["said"] and get_person(world, data, t["id"]) is not None]
    return sorted(live, key=lambda t: (t["said"][-1]["day"], -minutes(t["said"][-1]["time"]), t["id"]))


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: people and threads by id (overlays applied)."""
    return {"people": {r["id"]: r for r in people_list(world, data)},
            "threads": {t["id"]: t for t in records.merged(world["threads"], data["threads"])}}


def when(msg: dict[str, Any]) -> str:
    """When a line was written: its time today, else its week day."""
    return msg["time"] if msg["day"] == 0 else WEEKDAYS[(TODAY - timedelta(days=msg["day"])).weekday()]


# --- screens ---------------------------------------------------------------------------------------

class _Screens:
    """Screen builders and effects of one spec."""

    def __init__(self, spec: ConvoSpec):
        self.spec = spec

    def name(self, ctx: Ctx, pid: str) -> str:
        return get_person(ctx.world, ctx.data, pid)["title"]

    def thread_row(self, ctx: Ctx, t: dict[str, Any]) -> Any:
        s, last, who = self.spec, t["said"][-1], self.name(ctx, t["id"])
        line = (f"{s.me_word}: " if last["from"] == "me" else "") + last["text"]
        badge = (str(t["unread"]) if s.badge == "count" else f"{t['unread']} new") if t["unread"] else when(last)
        return item(who, line, on_tap=tap("open_thread", pid=t["id"]), long_tap=tap("thread_menu", pid=t["id"]),
                    avatar=who, trailing=badge, rid=f"thread_{t['id']}")

    def thread_rows(self, ctx: Ctx) -> list:
        s, threads = self.spec, thread_list(ctx.world, ctx.data)

        def match(t: dict[str, Any], needle: str) -> bool:
            said = (m["text"] for m in t["said"])
            return needle in self.name(ctx, t["id"]).casefold() or any(needle in x.casefold() for x in said)

        rows, threads = searched(ctx, "q", f"Search {s.plural}", threads, match=match, none=f"No {s.plural} found",
                                 idle=f"{sum(1 for t in threads if t['unread'])} unread")
        return rows + [self.thread_row(ctx, t) for t in threads]

    def people_rows(self, ctx: Ctx) -> list:
        s, people = self.spec, people_list(ctx.world, ctx.data)
        rows, people = searched(ctx, "pq", f"Search {s.people}", people, none=f"No {s.people} found",
                                idle=counted(len(people), s.person, s.people))
        for p in people:
            sub = p["handle"] if s.sub_line == "handle" else p["group"]
            rows.append(item(p["title"], sub + (f" · {s.blocked_word.lower()}" if p["blocked"] else ""),
                             on_tap=tap("open_person", pid=p["id"]), long_tap=tap("person_menu", pid=p["id"]),
                             avatar=p["title"], trailing="★" if p["starred"] else "", rid=f"person_{p['id']}"))
        return rows

    def home(self, ctx: Ctx) -> Page:
        s = self.spec
        tab = ctx.ui("tab", "threads") if s.people_at == "tab" else "threads"
        rows, actions = [], []
        if s.people_at == "tab":
            rows.append(tabs([(s.plural.capitalize(), tap("set_tab", tab="threads"), tab == "threads"),
                              (s.people.capitalize(), tap("set_tab", tab="people"), tab == "people")]))
        else:
            actions.append(icon_button("person", s.people.capitalize(), tap("open_people")))
        rows += self.people_rows(ctx) if tab == "people" else self.thread_rows(ctx)
        start = fab("plus", f"New {s.noun}", tap("open_picker")) if tab == "threads" else None
        return Page(s.label, rows, up=False, actions=actions, fab=start)

    def people_page(self, ctx: Ctx) -> Page:
        return Page(self.spec.people.capitalize(), self.people_rows(ctx))

    def thread(self, ctx: Ctx) -> Page:
        s, pid = self.spec, ctx.params["pid"]
        t = get_thread(ctx.world, ctx.data, pid)
        msgs, first = (t["said"] if t else []), self.name(ctx, pid).split()[0]
        bubbles = [item(m["text"], f"{s.me_word if m['from'] == 'me' else first} · {when(m)}",
                        glyph="message" if m["from"] == "me" else "person", rid=f"line_{i}")
                   for i, m in enumerate(msgs)]
        if not bubbles:
            bubbles = [paragraph(f"Nothing yet. Say something to {first}.")]
        compose = [field_row("msg", s.compose_label, ctx.field("msg"), ctx.focused("msg"),
                             hint=f"{s.compose_label}…"),
                   button(s.send_word, tap("send", pid=pid), enabled=bool(ctx.field("msg").strip()))]
        if s.compose == "top":
            rows = compose + [header(counted(len(msgs), "line"))] + bubbles[::-1]
        else:
            rows = bubbles + compose
        return Page(self.name(ctx, pid), rows)

    def picker(self, ctx: Ctx) -> Page:
        s, q = self.spec, ctx.field("to")
        rows = [field_row("to", "To", q, ctx.focused("to"), hint=f"Find a {s.person}")]
        people = people_list(ctx.world, ctx.data)
        if q.strip():
            needle = q.casefold().strip()
            people = [p for p in people if needle in p["title"].casefold() or needle in p["handle"].casefold()]
        elif s.picker == "suggest":
            return Page(f"New {s.noun}", rows + [paragraph(f"Type a name to find a {s.person}.")])
        rows.append(header(counted(len(people), s.person, s.people) if people else f"No {s.people} found"))
        rows += [item(p["title"], p["handle"], on_tap=tap("open_thread", pid=p["id"]), avatar=p["title"],
                      rid=f"to_{p['id']}") for p in people]
        return Page(f"New {s.noun}", rows)

    def person_page(self, ctx: Ctx) -> Page:
        s = self.spec
        p = get_person(ctx.world, ctx.data, ctx.params["pid"])
        if p is None:
            return Page(s.person.capitalize(), [paragraph(f"This {s.person} was removed.")])
        pid = p["id"]
        acts = [(s.message_word, "message", tap("open_thread", pid=pid)), ("Edit", "edit", tap("open_edit", pid=pid))]
        rows = [hero(p["title"], s.starred_word if p["starred"] else "")]
        if s.person_actions == "bar":
            rows.append(action_bar(acts))
        rows += [info(s.handle_label, p["handle"], rid="handle"), info(s.group.label, p["group"], rid="group")]
        if p["blocked"]:
            rows.append(info("Status", s.blocked_word, rid="status"))
        if s.person_actions == "buttons":
            rows += [button(caption, t) for caption, _, t in acts]
        return Page(p["title"], rows)

    def edit(self, ctx: Ctx) -> Page:
        s = self.spec
        rows = [field_row("title", "Name", ctx.field("title"), ctx.focused("title")),
                field_row("handle", s.handle_label, ctx.field("handle"), ctx.focused("handle"),
                          hint=HANDLE_HINTS[s.handle_style]),
                item(s.group.label, ctx.ui("group", ""), on_tap=tap("ask_group"), chevron=True, rid="group_picker"),
                button("Save", tap("save"))]
        return Page(f"Edit {s.person}", rows, actions=[icon_button("check", "Save", tap("save"))])

    # --- effects ---------------------------------------------------------------------------------

    def confirm(self, ctx: Ctx, title: str, message: str, word: str, trigger: str, pid: str) -> None:
        ctx.dialog(title, message, buttons=[("Cancel", tap("dismiss")), (word, tap(trigger, pid=pid))])

    def guard_send(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        if not ctx.field("msg").strip():
            return "nothing to send"
        if get_person(ctx.world, ctx.data, p["pid"])["blocked"]:
            return f"{self.spec.blocked_word.lower()}: cannot send"
        return None

    def send(self, ctx: Ctx, p: dict[str, Any]) -> None:
        old = get_thread(ctx.world, ctx.data, p["pid"]) or {"id": p["pid"], "said": [], "topic": ""}
        h, m = ctx.system["clock"].split(":")
        line = {"from": "me", "text": ctx.field("msg").strip(), "day": 0, "time": f"{int(h):02d}:{m}"}
        records.put(ctx.data["threads"], {**old, "said": old["said"] + [line], "unread": 0})
        ctx.set_field("msg", "")
        ctx.page["focus"] = None
        ctx.toast(self.spec.sent_toast)

    def thread_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, t = self.spec, get_thread(ctx.world, ctx.data, p["pid"])
        options = [(s.read_word, tap("mark_read", pid=t["id"]), False)] if t["unread"] else []
        ctx.dialog(self.name(ctx, t["id"]), options=options + [(s.delete_word, tap("ask_drop", pid=t["id"]), False)])

    def mark_read(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.edited(ctx.world["threads"], ctx.data["threads"], p["pid"], unread=0)
        ctx.toast(f"{self.name(ctx, p['pid']).split()[0]}: all read")

    def ask_drop(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s = self.spec
        self.confirm(ctx, f"{s.delete_word} this {s.noun}?", f"Every line with {self.name(ctx, p['pid'])} goes.",
                     s.delete_word, "drop", p["pid"])

    def drop(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.delete(ctx.data["threads"], p["pid"])
        ctx.toast(f"{self.spec.noun.capitalize()} removed")

    def person_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, who = self.spec, get_person(ctx.world, ctx.data, p["pid"])
        star = f"Un{s.star_word.lower()}" if who["starred"] else s.star_word
        block = ("unblock", f"Un{s.block_word.lower()}") if who["blocked"] else ("ask_block", s.block_word)
        ctx.dialog(who["title"], options=[(star, tap("star", pid=who["id"]), False),
                                          (block[1], tap(block[0], pid=who["id"]), False),
                                          (s.delete_word, tap("ask_remove", pid=who["id"]), False)])

    def star(self, ctx: Ctx, p: dict[str, Any]) -> None:
        who = get_person(ctx.world, ctx.data, p["pid"])
        records.edited(ctx.world["people"], ctx.data["people"], who["id"], starred=not who["starred"])
        ctx.toast(f"{who['title']}: {'not ' if who['starred'] else ''}{self.spec.starred_word.lower()}")

    def ask_block(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, who = self.spec, self.name(ctx, p["pid"])
        self.confirm(ctx, f"{s.block_word} {who}?", f"{who} can no longer reach you here.", s.block_word, "block",
                     p["pid"])

    def set_blocked(self, value: bool):
        def effect(ctx: Ctx, p: dict[str, Any]) -> None:
            records.edited(ctx.world["people"], ctx.data["people"], p["pid"], blocked=value)
            ctx.toast(f"{self.name(ctx, p['pid'])}: {'' if value else 'not '}{self.spec.blocked_word.lower()}")
        return effect

    def ask_remove(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, who = self.spec, self.name(ctx, p["pid"])
        self.confirm(ctx, f"{s.delete_word} {who}?", f"{who} leaves your {s.people}.", s.delete_word, "remove",
                     p["pid"])

    def remove(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.delete(ctx.data["people"], p["pid"])
        ctx.toast(f"{self.spec.person.capitalize()} removed")

    def open_edit(self, ctx: Ctx) -> None:
        who = get_person(ctx.world, ctx.data, ctx.params["pid"])
        ctx.set_field("title", who["title"])
        ctx.set_field("handle", who["handle"])
        ctx.set_ui("group", who["group"])

    def guard_save(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        if not ctx.field("title").strip():
            return f"a {self.spec.person} needs a name"
        if not valid_handle(self.spec, ctx.field("handle").strip()):
            return f"{self.spec.handle_label.lower()} not understood (like {HANDLE_HINTS[self.spec.handle_style]})"
        return None

    def save(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.edited(ctx.world["people"], ctx.data["people"], ctx.params["pid"], title=ctx.field("title").strip(),
                       handle=ctx.field("handle").strip(), group=ctx.ui("group"))
        ctx.toast(f"{self.spec.person.capitalize()} saved")


def build_convo_app(spec: ConvoSpec) -> App:
    """The App of one conversations spec (its templates are attached by the pretraining registry)."""
    s = _Screens(spec)
    lists = ("home",) if spec.people_at == "tab" else ("people",)
    screens = [Screen("home", s.home, doc=spec.label),
               Screen("thread", s.thread, params=("pid",), doc=spec.noun.capitalize()),
               Screen("picker", s.picker, doc=f"New {spec.noun}"),
               Screen("person", s.person_page, params=("pid",), doc=spec.person.capitalize()),
               Screen("edit", s.edit, params=("pid",), doc=f"Edit {spec.person}", on_open=s.open_edit)]
    transitions = [
        Transition("open_thread", ("home", "picker", "person"), "thread"),
        Transition("open_picker", ("home",), "picker"),
        Transition("send", ("thread",), None, s.send, s.guard_send),
        Transition("thread_menu", ("home",), None, s.thread_menu),
        Transition("mark_read", ("home",), None, s.mark_read),
        Transition("ask_drop", ("home",), None, s.ask_drop),
        Transition("drop", ("home",), None, s.drop),
        Transition("open_person", lists, "person"),
        Transition("person_menu", lists, None, s.person_menu),
        Transition("star", lists, None, s.star),
        Transition("ask_block", lists, None, s.ask_block),
        Transition("block", lists, None, s.set_blocked(True)),
        Transition("unblock", lists, None, s.set_blocked(False)),
        Transition("ask_remove", lists, None, s.ask_remove),
        Transition("remove", lists, None, s.remove),
        Transition("open_edit", ("person",), "edit"),
        Transition("ask_group", ("edit",), None,
                   effects.choice_dialog(spec.group.label, "group", spec.group.values, "choose_group", param="value")),
        Transition("choose_group", ("edit",), None, effects.set_ui_from_tap("group", "value")),
        Transition("save", ("edit",), BACK, s.save, s.guard_save),
        Transition("dismiss", ("*",), None, None),
    ]
    if spec.people_at == "tab":
        transitions.append(Transition("set_tab", ("home",), None, effects.set_ui_from_tap("tab", rescroll=True)))
    else:
        screens.append(Screen("people", s.people_page, doc=spec.people.capitalize()))
        transitions.append(Transition("open_people", ("home",), "people"))
    return App(name=spec.name, label=spec.label, package=spec.package, color=spec.color, glyph=spec.glyph,
               home="home", screens={x.id: x for x in screens}, transitions={t.id: t for t in transitions},
               make_world=make_world_fn(spec), initial_data=initial_data, view=view, entity_params=("pid",))
