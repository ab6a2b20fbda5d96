"""Tasks-app templates, plus cross-app ones that end in Tasks (contacts → tasks, calendar → tasks)."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.todo.world import LISTS, NEW_TITLES, PRIORITIES, all_tasks, get_task
from phonesim.dates import TODAY, counted, day, long_date
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate, extend
from phonesim.variety import recount, regroup


TASKS = Lookup("todo", all_tasks, get_task)
tasks, task, attr = TASKS.records, TASKS.record, TASKS.attr


def pick(where=lambda t: True):
    def sample(rng: random.Random, phone) -> dict:
        t = rng.choice([t for t in tasks(phone) if where(t)])
        return {"tid": t["id"], "title": t["title"], "lst": t["list"]}
    return sample


def set_done(value: bool):
    return lambda phone, p: TASKS.edit(phone, p["tid"], done=value)


def path(p, key: str = "") -> str:
    return f"todo.tasks.{p['tid']}" + (f".{key}" if key else "")


def created(phone, title: str) -> list[dict]:
    return [t for t in tasks(phone) if t["id"].startswith("n") and t["title"].casefold() == title.casefold()]


def sample_new(rng, phone) -> dict:
    offset = rng.randint(1, 20)
    return {"title": rng.choice(NEW_TITLES), "lst": rng.choice(LISTS[1:]), "due": day(offset),
            "due_long": long_date(day(offset)), "priority": rng.choice(PRIORITIES[:3])}


def with_other_priority(base):
    return extend(base, lambda rng, phone, p: {
        "priority": rng.choice([x for x in PRIORITIES if x != task(phone, p["tid"])["priority"]])})


def with_new_due(base):
    def add(rng, phone, p):
        p["due"] = rng.choice([d for d in (day(k) for k in range(1, 25)) if d != task(phone, p["tid"])["due"]])
        return {"due_long": long_date(p["due"])}
    return extend(base, add)


def sample_list_open(rng, phone) -> dict:
    """A list and how many of its tasks are still open (0..all): done ones reopen or open ones get done."""
    lst = rng.choice(LISTS)
    mine = [t for t in tasks(phone) if t["list"] == lst]
    return {"lst": lst, **recount(rng, [t["id"] for t in mine if not t["done"]], [t["id"] for t in mine if t["done"]],
                                  0, len(mine))}


def open_count(phone, lst: str) -> int:
    return sum(1 for t in tasks(phone) if t["list"] == lst and not t["done"])


def sample_call_task(rng, phone) -> dict:
    from phonesim.apps.contacts.tasks import pick as pick_contact
    p = pick_contact()(rng, phone)
    p["phone"] = phone.world("contacts")["contacts"][p["cid"]]["phone"]
    p["title"] = f"Call {p['name']} {p['phone']}"
    return p


def sample_event_task(rng, phone) -> dict:
    from phonesim.apps.calendar.tasks import pick_event
    p = pick_event()(rng, phone)
    p["due"] = p.pop("date")
    return p


def digits(s: str) -> str:
    return "".join(ch for ch in s if ch.isdigit())


TEMPLATES = [
    TaskTemplate(
        id="todo.complete", apps=("todo",), objective="operate", composition="sequential", difficulty=1,
        split="train", step_budget=15,
        instructions=("Mark the task \"{title}\" as done.", "I finished \"{title}\" — tick it off in Tasks."),
        sample=pick(), setup=set_done(False),
        checks=lambda phone, p: [("done", attr(phone, p["tid"], "done") is True)],
        expected=lambda p: [path(p, "done")], hints=lambda p: [p["title"]], tags=("edit",)),
    TaskTemplate(
        id="todo.reopen", apps=("todo",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Mark \"{title}\" as not done again.", "Reopen the completed task \"{title}\"."),
        sample=pick(), setup=set_done(True),
        checks=lambda phone, p: [("open", attr(phone, p["tid"], "done") is False)],
        expected=lambda p: [path(p, "done")], hints=lambda p: [p["title"]], tags=("edit", "search")),
    TaskTemplate(
        id="todo.create", apps=("todo",), objective="operate", composition="sequential", difficulty=3,
        split="train", step_budget=25,
        instructions=("Add a task \"{title}\" to my {lst} list, due {due_long}.",
                      "In Tasks, create \"{title}\" in the {lst} list with due date {due_long}."),
        sample=sample_new,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("list", any(t["list"] == p["lst"] for t in created(phone, p["title"]))),
                                 ("due", any(t["due"] == p["due"] for t in created(phone, p["title"])))],
        expected=lambda p: ["todo.tasks.n*"], hints=lambda p: [p["title"], p["due"]], tags=("create",)),
    TaskTemplate(
        id="todo.create_priority", apps=("todo",), objective="operate", composition="sequential", difficulty=3,
        split="test", step_budget=25,
        instructions=("Create a task \"{title}\" with {priority} priority.",
                      "Add \"{title}\" to Tasks and set its priority to {priority}."),
        sample=sample_new,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("priority", any(t["priority"] == p["priority"] for t in created(phone, p["title"])))],
        expected=lambda p: ["todo.tasks.n*"], hints=lambda p: [p["title"]], tags=("create",)),
    TaskTemplate(
        id="todo.delete", apps=("todo",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15, instructions=("Delete the task \"{title}\".", "Remove \"{title}\" from Tasks."),
        sample=pick(), checks=lambda phone, p: [("deleted", task(phone, p["tid"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("delete",)),
    TaskTemplate(
        id="todo.set_priority", apps=("todo",), objective="operate", composition="deep_dive", difficulty=2,
        split="train", step_budget=20,
        instructions=("Set the priority of \"{title}\" to {priority}.", "Make \"{title}\" a {priority}-priority task."),
        sample=with_other_priority(pick()),
        checks=lambda phone, p: [("priority", attr(phone, p["tid"], "priority") == p["priority"])],
        expected=lambda p: [path(p, "priority")], hints=lambda p: [p["title"]], tags=("edit",)),
    TaskTemplate(
        id="todo.reschedule", apps=("todo",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=25,
        instructions=("Change the due date of \"{title}\" to {due_long}.", "Move \"{title}\" so it is due {due_long}."),
        sample=with_new_due(pick()),
        checks=lambda phone, p: [("due", attr(phone, p["tid"], "due") == p["due"])],
        expected=lambda p: [path(p, "due")], hints=lambda p: [p["due"]], tags=("edit",)),
    TaskTemplate(
        id="todo.query_due", apps=("todo",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("When is \"{title}\" due?", "What is the due date of the task \"{title}\"?"),
        sample=pick(lambda t: bool(t["due"])),
        answer=lambda phone, p: AnswerSpec("date", task(phone, p["tid"])["due"], hint="a date (YYYY-MM-DD)"),
        evidence=lambda p, spec: [long_date(spec.gold)], hints=lambda p: [p["title"]], tags=("extract", "search")),
    TaskTemplate(
        id="todo.query_open_count", apps=("todo",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15, instructions=("How many open tasks are in my {lst} list?",),
        sample=sample_list_open, setup=regroup(TASKS, lambda p: {"done": False}, lambda p: {"done": True}),
        answer=lambda phone, p: AnswerSpec("number", float(open_count(phone, p["lst"])), hint="a number"),
        evidence=lambda p, spec: [f"{p['lst']}\n{spec.gold:g} open", counted(int(spec.gold), "open task")],
        tags=("extract",)),
    TaskTemplate(
        id="todo.query_today", apps=("todo",), objective="query", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("How many open tasks are due today?", "How many tasks that are not done yet are due today?"),
        sample=lambda rng, phone: {},
        answer=lambda phone, p: AnswerSpec("number", float(sum(1 for t in tasks(phone) if t["due"] == TODAY.isoformat()
                                                               and not t["done"])), hint="a number"),
        evidence=lambda p, spec: [f"{spec.gold:g} due today"], tags=("extract", "search")),
    TaskTemplate(
        id="todo.hybrid_priority_complete", apps=("todo",), objective="hybrid", composition="sequential",
        difficulty=3, split="test", step_budget=20,
        instructions=("Tell me the priority of \"{title}\", then mark it as done.",),
        sample=pick(), setup=set_done(False),
        checks=lambda phone, p: [("done", attr(phone, p["tid"], "done") is True)],
        answer=lambda phone, p: AnswerSpec("choice", task(phone, p["tid"])["priority"], choices=PRIORITIES,
                                           hint="one of " + ", ".join(PRIORITIES)),
        evidence=lambda p, spec: [f"Priority\n{spec.gold}"],
        expected=lambda p: [path(p, "done")], hints=lambda p: [p["title"]], tags=("extract", "edit")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="todo.multi_call_contact", apps=("contacts", "todo"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=30,
        instructions=("Add a task to call {name}: title it \"Call {name}\" followed by their phone number.",
                      "Look up {name}'s number in Contacts and create the task \"Call {name} <number>\"."),
        sample=sample_call_task,
        checks=lambda phone, p: [("task", any(t["id"].startswith("n") and p["name"].casefold() in t["title"].casefold()
                                              and digits(p["phone"]) in digits(t["title"]) for t in tasks(phone)))],
        expected=lambda p: ["todo.tasks.n*"], hints=lambda p: [p["title"]], tags=("handoff", "create")),
    TaskTemplate(
        id="todo.multi_event_task", apps=("calendar", "todo"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Create a task \"{title}\" due on the day of the calendar event \"{title}\".",
                      "Check when \"{title}\" is in my calendar and add a task with that name due that day."),
        sample=sample_event_task,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("due", any(t["due"] == p["due"] for t in created(phone, p["title"])))],
        expected=lambda p: ["todo.tasks.n*"], hints=lambda p: [p["title"], p["due"]], tags=("handoff", "create")),
]
