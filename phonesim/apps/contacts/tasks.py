"""Contacts task templates, plus two cross-app templates (contacts + settings)."""

from __future__ import annotations

import random
import re

from phonesim.answers import AnswerSpec
from phonesim.apps.contacts.screens import pretty_date
from phonesim.apps.contacts.world import COMPANIES, FIRST, GROUPS, LAST, all_contacts, full_name, get_contact
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate, extend
from phonesim.variety import recount, regroup


PEOPLE = Lookup("contacts", all_contacts, get_contact)
people, contact, attr = PEOPLE.records, PEOPLE.record, PEOPLE.attr


def digits(s: str | None) -> str:
    return re.sub(r"\D", "", s or "")


def pick(where=lambda c: True):
    """Sampler choosing one contact (with a unique full name) that satisfies `where`."""
    def sample(rng: random.Random, phone) -> dict:
        everyone = people(phone)
        names = [full_name(c) for c in everyone]
        pool = [c for c in everyone if where(c) and names.count(full_name(c)) == 1]
        c = rng.choice(pool)
        return {"cid": c["id"], "name": full_name(c)}
    return sample


def with_new_phone(base):
    return extend(base, lambda rng, phone, p: {"phone": f"+1 {rng.randint(201, 989)}-555-{rng.randint(0, 9999):04d}"})


def with_new_email(base):
    def add(rng, phone, p):
        first = p["name"].split()[0].lower()
        return {"email": f"{first}.{rng.randint(10, 99)}@{rng.choice(['proton.me', 'work.io', 'example.org'])}"}
    return extend(base, add)


def with_other_group(base):
    def add(rng, phone, p):
        current = contact(phone, p["cid"])["group"]
        return {"group": rng.choice([g for g in GROUPS if g != current])}
    return extend(base, add)


def with_company(base):
    return extend(base, lambda rng, phone, p: {"company": contact(phone, p["cid"])["company"]})


def sample_group_size(rng, phone) -> dict:
    """A group and how many contacts are in it (1..15): others join it or members leave for no group."""
    group = rng.choice(GROUPS)
    everyone = people(phone)
    return {"group": group, **recount(rng, [c["id"] for c in everyone if c["group"] == group],
                                      [c["id"] for c in everyone if c["group"] != group], 1, 15)}


def sample_new_person(rng, phone):
    taken = {full_name(c) for c in people(phone)}
    while True:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if f"{first} {last}" not in taken:
            break
    return {"first": first, "last": last, "name": f"{first} {last}",
            "phone": f"+1 {rng.randint(201, 989)}-555-{rng.randint(0, 9999):04d}"}


def set_favorite(value: bool):
    return lambda phone, p: PEOPLE.edit(phone, p["cid"], favorite=value)


def lookup(*keys: str):
    """Solver hints: the contact's name (for the search box) plus the given param values."""
    return lambda p: [p["name"], *(p[k] for k in keys)]


def person_path(p) -> str:
    return f"contacts.people.{p['cid']}"


def created(phone, p) -> list[dict]:
    return [c for c in people(phone) if c["id"].startswith("n") and full_name(c).casefold() == p["name"].casefold()]


TEMPLATES = [
    TaskTemplate(
        id="contacts.query_phone", apps=("contacts",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("What is {name}'s phone number?", "Look up the phone number of {name}.",
                      "Find {name} in Contacts and tell me their number."),
        sample=pick(), answer=lambda phone, p: AnswerSpec("phone", contact(phone, p["cid"])["phone"],
                                                         hint="the phone number"), hints=lookup(), tags=("extract", "search")),
    TaskTemplate(
        id="contacts.query_email", apps=("contacts",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15, instructions=("What is {name}'s email address?",),
        sample=pick(), answer=lambda phone, p: AnswerSpec("text", contact(phone, p["cid"])["email"],
                                                         hint="the email address"), hints=lookup(), tags=("extract",)),
    TaskTemplate(
        id="contacts.query_birthday", apps=("contacts",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15, instructions=("When is {name}'s birthday?", "What is the birth date of {name}?"),
        sample=pick(lambda c: bool(c["birthday"])),
        answer=lambda phone, p: AnswerSpec("date", contact(phone, p["cid"])["birthday"], hint="a date (YYYY-MM-DD)"),
        evidence=lambda p, spec: [pretty_date(spec.gold)], hints=lookup(), tags=("extract",)),
    TaskTemplate(
        id="contacts.query_group", apps=("contacts",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15, instructions=("Which group is {name} in?",),
        sample=pick(),
        answer=lambda phone, p: AnswerSpec("choice", contact(phone, p["cid"])["group"] or "None",
                                           choices=("None",) + GROUPS, hint="one of None, " + ", ".join(GROUPS)),
        hints=lookup(), tags=("extract",)),
    TaskTemplate(
        id="contacts.query_group_count", apps=("contacts",), objective="query", composition="deep_dive",
        difficulty=3, split="test", step_budget=20,
        instructions=("How many contacts are in the {group} group?",),
        sample=sample_group_size, setup=regroup(PEOPLE, lambda p: {"group": p["group"]}, lambda p: {"group": ""}),
        answer=lambda phone, p: AnswerSpec("number", float(sum(c["group"] == p["group"] for c in people(phone))),
                                           hint="a number"),
        evidence=lambda p, spec: [f"{spec.gold:g} contacts in {p['group']}", f"{p['group']}\n{spec.gold:g} contacts"],
        tags=("extract", "explore")),
    TaskTemplate(
        id="contacts.favorite", apps=("contacts",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15, instructions=("Add {name} to favourites.", "Star the contact {name}."),
        sample=pick(), setup=set_favorite(False),
        checks=lambda phone, p: [("favourite", bool(attr(phone, p["cid"], "favorite")))],
        expected=lambda p: [person_path(p) + ".favorite"], hints=lookup(), tags=("edit",)),
    TaskTemplate(
        id="contacts.delete", apps=("contacts",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15, instructions=("Delete the contact {name}.", "Remove {name} from my contacts."),
        sample=pick(), checks=lambda phone, p: [("deleted", contact(phone, p["cid"]) is None)],
        expected=lambda p: [person_path(p)], hints=lookup(), tags=("delete",)),
    TaskTemplate(
        id="contacts.create", apps=("contacts",), objective="operate", composition="sequential", difficulty=3,
        split="train", step_budget=25,
        instructions=("Create a contact named {name} with phone number {phone}.",
                      "Add a new contact: {first} {last}, phone {phone}."),
        sample=sample_new_person,
        checks=lambda phone, p: [("created", bool(created(phone, p))),
                                 ("phone", any(digits(c["phone"]) == digits(p["phone"]) for c in created(phone, p)))],
        expected=lambda p: ["contacts.people.n*"], hints=lambda p: [p["first"], p["last"], p["phone"]],
        tags=("create",)),
    TaskTemplate(
        id="contacts.edit_phone", apps=("contacts",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=25,
        instructions=("Change {name}'s phone number to {phone}.", "Update the number of {name} to {phone}."),
        sample=with_new_phone(pick()),
        checks=lambda phone, p: [("phone", digits(attr(phone, p["cid"], "phone")) == digits(p["phone"]))],
        expected=lambda p: [person_path(p) + ".phone"], hints=lookup("phone"), tags=("edit", "search")),
    TaskTemplate(
        id="contacts.edit_email", apps=("contacts",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=25, instructions=("Set {name}'s email address to {email}.",),
        sample=with_new_email(pick()),
        checks=lambda phone, p: [("email", (attr(phone, p["cid"], "email") or "").casefold() == p["email"])],
        expected=lambda p: [person_path(p) + ".email"], hints=lookup("email"), tags=("edit",)),
    TaskTemplate(
        id="contacts.set_group", apps=("contacts",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=25, instructions=("Move {name} to the {group} group.",
                                                     "Put {name} in the {group} group."),
        sample=with_other_group(pick()),
        checks=lambda phone, p: [("group", attr(phone, p["cid"], "group") == p["group"])],
        expected=lambda p: [person_path(p) + ".group"], hints=lookup(), tags=("edit",)),
    TaskTemplate(
        id="contacts.call", apps=("contacts",), objective="operate", composition="sequential", difficulty=1,
        split="test", step_budget=15, instructions=("Call {name}.", "Phone {name}."),
        sample=pick(), checks=lambda phone, p: [("called", p["cid"] in phone.data("contacts")["calls"])],
        expected=lambda p: ["contacts.calls"], hints=lookup(), tags=("social",)),
    TaskTemplate(
        id="contacts.hybrid_company_favorite", apps=("contacts",), objective="hybrid", composition="sequential",
        difficulty=3, split="test", step_budget=20,
        instructions=("Find out where {name} works, answer with the company, and add them to favourites.",),
        sample=pick(lambda c: bool(c["company"])), setup=set_favorite(False),
        checks=lambda phone, p: [("favourite", bool(attr(phone, p["cid"], "favorite")))],
        answer=lambda phone, p: AnswerSpec("choice", contact(phone, p["cid"])["company"], choices=tuple(COMPANIES),
                                           hint="the company name"),
        expected=lambda p: [person_path(p) + ".favorite"], hints=lookup(), tags=("extract", "edit")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="contacts.multi_bluetooth_then_call", apps=("settings", "contacts"), objective="operate",
        composition="sequential", difficulty=3, split="ood", step_budget=25,
        instructions=("Turn on Bluetooth, then call {name}.", "Enable Bluetooth and afterwards phone {name}."),
        sample=pick(), setup=lambda phone, p: phone.state["data"]["system"].update(bluetooth=False, airplane=False),
        checks=lambda phone, p: [("bluetooth on", phone.state["data"]["system"]["bluetooth"]),
                                 ("called", p["cid"] in phone.data("contacts")["calls"])],
        expected=lambda p: ["system.bluetooth", "contacts.calls"], hints=lookup(), tags=("settings", "social")),
    TaskTemplate(
        id="contacts.multi_device_name_from_company", apps=("contacts", "settings"), objective="operate",
        composition="transfer", difficulty=4, split="ood", step_budget=30,
        instructions=("Rename this phone to the company {name} works for.",
                      "Look up {name}'s company in Contacts and use it as the device name."),
        sample=with_company(pick(lambda c: bool(c["company"]))),
        checks=lambda phone, p: [("device name", phone.state["data"]["system"]["device_name"]
                                  == p["company"])],
        expected=lambda p: ["system.device_name"], hints=lookup("company"), tags=("handoff", "settings")),
]
