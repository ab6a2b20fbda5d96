"""Notes task templates: create / rename / move / edit / delete, typed look-ups (folder, count,
facts written in notes), a hybrid, and cross-app hand-offs that end in a new note."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec, parse_numbers
from phonesim.apps.contacts.world import all_contacts, full_name
from phonesim.apps.expenses.world import CATEGORIES as EXPENSE_CATEGORIES
from phonesim.apps.expenses.tasks import draw_expense, log_and_delete
from phonesim.apps.expenses.world import all_expenses, money, totals
from phonesim.apps.notes.world import FOLDERS, all_notes, get_note
from phonesim.apps.recipes.world import all_recipes
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate
from phonesim.variety import recount, regroup

NEW_NOTES = [("Call the plumber", "Kitchen tap drips, ask about Thursday"),
             ("Weekend plan", "Hike on Saturday, farmers market Sunday"),
             ("Movie night", "Dune Part Two or Past Lives"),
             ("Team lunch", "Book a table for six at noon"),
             ("Reading goals", "Two novels and one history book a month"),
             ("Bike service", "Replace brake pads and chain")]
NEW_TITLES = ("Archive", "Old draft", "Keep", "Later", "Reference", "Done")
NEW_BODIES = ("Moved to the shared drive", "Nothing left to do here", "Ask again next week",
              "Confirmed by email")


NOTES = Lookup("notes", all_notes, get_note)
notes, note, attr = NOTES.records, NOTES.record, NOTES.attr


def pick(rng: random.Random, phone) -> dict:
    n = rng.choice(notes(phone))
    return {"nid": n["id"], "title": n["title"]}


def pick_fact(rng: random.Random, phone) -> dict:
    nid = rng.choice(sorted(phone.world("notes")["facts"]))
    return {"nid": nid, "title": note(phone, nid)["title"], "label": phone.world("notes")["facts"][nid]["label"]}


def with_other_folder(rng, phone) -> dict:
    p = pick(rng, phone)
    p["folder"] = rng.choice([f for f in FOLDERS if f != attr(phone, p["nid"], "folder")])
    return p


def with_new_title(rng, phone) -> dict:
    p = pick(rng, phone)
    p["new_title"] = f"{rng.choice(NEW_TITLES)}: {p['title']}"
    return p


def with_new_body(rng, phone) -> dict:
    p = pick(rng, phone)
    p["body"] = rng.choice(NEW_BODIES)
    return p


def sample_folder_size(rng, phone) -> dict:
    """A folder and how many notes it holds (0..10): other notes move in, or its notes move to
    another folder (`elsewhere`)."""
    folder = rng.choice(FOLDERS)
    everyone = notes(phone)
    return {"folder": folder, "elsewhere": rng.choice([f for f in FOLDERS if f != folder]),
            **recount(rng, [n["id"] for n in everyone if n["folder"] == folder],
                      [n["id"] for n in everyone if n["folder"] != folder], 0, 10)}


def sample_new(rng, phone) -> dict:
    title, body = rng.choice(NEW_NOTES)
    return {"title": title, "body": body, "folder": rng.choice(FOLDERS)}


def created(phone, title: str) -> list[dict]:
    return [n for n in notes(phone) if n["id"].startswith("n") and n["title"].casefold() == title.casefold()]


def body_has(phone, title: str, needles: list[str]) -> bool:
    return any(all(x.casefold() in n["body"].casefold() for x in needles) for n in created(phone, title))


def path(p) -> str:
    return f"notes.notes.{p['nid']}"


def fact(phone, p) -> str:
    return phone.world("notes")["facts"][p["nid"]]["value"]


# --- cross-app samplers -----------------------------------------------------------------------

def sample_contact(rng, phone) -> dict:
    people = all_contacts(phone.world("contacts"), phone.data("contacts"))
    names = [full_name(c) for c in people]
    c = rng.choice([c for c in people if names.count(full_name(c)) == 1])
    return {"cid": c["id"], "name": full_name(c), "phone": c["phone"]}


def sample_recipe(rng, phone) -> dict:
    r = rng.choice(all_recipes(phone.world("recipes"), phone.data("recipes")))
    return {"recipe": r["id"], "recipe_title": r["title"], "title": f"Shopping for {r['title']}",
            "ingredients": ", ".join(r["ingredients"])}


def sample_spending(rng, phone) -> dict:
    """A category and its total once a drawn expense of it is logged (`log_and_delete`), so the
    total differs between instances."""
    category = rng.choice(EXPENSE_CATEGORIES)
    logged = draw_expense(rng, category)
    total = totals(all_expenses(phone.world("expenses"), phone.data("expenses")))[category][1] + logged["amount"]
    return {"category": category, "title": f"{category} budget", "total": money(total), "added": [logged],
            "deleted": []}


def sample_event_venue(rng, phone) -> dict:
    from phonesim.apps.calendar.tasks import event, pick_event
    p = pick_event()(rng, phone)
    p.update(note_title=f"Where: {p['title']}", location=event(phone, p["eid"])["location"])
    return p


def sample_contact_email(rng, phone) -> dict:
    from phonesim.apps.contacts.tasks import contact, pick
    p = pick(lambda c: bool(c.get("email")))(rng, phone)
    p["email"] = contact(phone, p["cid"])["email"]
    return p


def sample_texted(fact_key: str, note_titles: tuple[str, ...]):
    """A Messages thread carrying `fact_key` (read from the sms world, so notes does not import
    the sms tasks, which import these), that fact, and a note title drawn from `note_titles`
    (str.format over the sender's `first` name)."""
    def sample(rng, phone) -> dict:
        threads = phone.world("sms")["threads"]
        t = rng.choice([t for t in threads.values() if fact_key in t["facts"]])
        return {"cid": t["cid"], "name": t["name"], "title": rng.choice(note_titles).format(first=t["name"].split()[0]),
                "value": t["facts"][fact_key]}
    return sample


def sample_recipe_servings(rng, phone) -> dict:
    from phonesim.apps.recipes.tasks import attr, pick
    r = pick(rng, phone)
    return {"recipe": r["recipe"], "recipe_title": r["title"], "title": f"{r['title']} servings",
            "servings": str(attr(phone, r["recipe"], "servings"))}


def total_noted(phone, p) -> bool:
    gold = float(p["total"].lstrip("$").replace(",", ""))
    return any(any(abs(v - gold) < 0.005 for v in parse_numbers(n["body"])) for n in created(phone, p["title"]))


TEMPLATES = [
    TaskTemplate(
        id="notes.create", apps=("notes",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Create a note in {folder} titled \"{title}\" with the text \"{body}\".",
                      "In the {folder} folder, write a new note \"{title}\": {body}."),
        sample=sample_new,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("text", body_has(phone, p["title"], [p["body"]])),
                                 ("folder", any(n["folder"] == p["folder"] for n in created(phone, p["title"])))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["title"], p["body"]], tags=("create",)),
    TaskTemplate(
        id="notes.delete", apps=("notes",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Delete the note \"{title}\".", "Remove my note called {title}."),
        sample=pick, checks=lambda phone, p: [("deleted", note(phone, p["nid"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("delete",)),
    TaskTemplate(
        id="notes.rename", apps=("notes",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Rename the note \"{title}\" to \"{new_title}\".", "Change the title of {title} to {new_title}."),
        sample=with_new_title, checks=lambda phone, p: [("title", attr(phone, p["nid"], "title") == p["new_title"])],
        expected=lambda p: [path(p) + ".title", path(p) + ".modified"],
        hints=lambda p: [p["title"], p["new_title"]], tags=("edit",)),
    TaskTemplate(
        id="notes.move", apps=("notes",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Move the note \"{title}\" to the {folder} folder.", "File {title} under {folder}."),
        sample=with_other_folder, checks=lambda phone, p: [("folder", attr(phone, p["nid"], "folder") == p["folder"])],
        expected=lambda p: [path(p) + ".folder", path(p) + ".modified"], hints=lambda p: [p["title"]],
        tags=("edit", "nav")),
    TaskTemplate(
        id="notes.edit_body", apps=("notes",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Replace the text of the note \"{title}\" with \"{body}\".",),
        sample=with_new_body, checks=lambda phone, p: [("text", attr(phone, p["nid"], "body") == p["body"])],
        expected=lambda p: [path(p) + ".body", path(p) + ".modified"], hints=lambda p: [p["title"], p["body"]],
        tags=("edit",)),
    TaskTemplate(
        id="notes.query_folder", apps=("notes",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("Which folder is the note \"{title}\" in?", "In which folder did I file {title}?"),
        sample=pick, answer=lambda phone, p: AnswerSpec("choice", attr(phone, p["nid"], "folder"), choices=FOLDERS,
                                                        hint="one of " + ", ".join(FOLDERS)),
        evidence=lambda p, spec: [f"Folder\n{spec.gold}"], hints=lambda p: [p["title"]], tags=("extract", "search")),
    TaskTemplate(
        id="notes.query_count", apps=("notes",), objective="query", composition="atomic", difficulty=2,
        split="test", step_budget=15,
        instructions=("How many notes are in the {folder} folder?",),
        sample=sample_folder_size,
        setup=regroup(NOTES, lambda p: {"folder": p["folder"]}, lambda p: {"folder": p["elsewhere"]}),
        answer=lambda phone, p: AnswerSpec("number", float(sum(n["folder"] == p["folder"] for n in notes(phone))),
                                           hint="a number"),
        evidence=lambda p, spec: [f"{p['folder']}\n{spec.gold:g} notes"], tags=("extract",)),
    TaskTemplate(
        id="notes.query_fact", apps=("notes",), objective="query", composition="deep_dive", difficulty=3,
        split="train", step_budget=15,
        instructions=("What is the {label} written in my note \"{title}\"?",
                      "Look up the {label} in the note {title}."),
        sample=pick_fact, answer=lambda phone, p: AnswerSpec("text", fact(phone, p), hint=f"the {p['label']}"),
        hints=lambda p: [p["title"]], tags=("extract", "search")),
    TaskTemplate(
        id="notes.hybrid_fact_delete", apps=("notes",), objective="hybrid", composition="sequential", difficulty=3,
        split="test", step_budget=20,
        instructions=("Tell me the {label} from the note \"{title}\", then delete that note.",),
        sample=pick_fact, checks=lambda phone, p: [("deleted", note(phone, p["nid"]) is None)],
        answer=lambda phone, p: AnswerSpec("text", fact(phone, p), hint=f"the {p['label']}"),
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("extract", "delete")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="notes.multi_contact_phone", apps=("contacts", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Create a note titled \"{name}\" containing {name}'s phone number from Contacts.",
                      "Look up {name} in Contacts and save their number in a new note named after them."),
        sample=sample_contact,
        checks=lambda phone, p: [("created", bool(created(phone, p["name"]))),
                                 ("number", any("".join(ch for ch in p["phone"] if ch.isdigit())
                                                in "".join(ch for ch in n["body"] if ch.isdigit())
                                                for n in created(phone, p["name"])))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["name"], p["phone"]], tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_recipe_ingredients", apps=("recipes", "notes"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=25,
        instructions=("Make a note titled \"{title}\" listing every ingredient of the {recipe_title} recipe.",
                      "Copy the ingredients of {recipe_title} from Recipes into a new note called \"{title}\"."),
        sample=sample_recipe,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("ingredients", body_has(phone, p["title"], p["ingredients"].split(", ")))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["recipe_title"], p["title"], p["ingredients"]],
        tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_expense_total", apps=("expenses", "notes"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=25,
        instructions=("Write a note titled \"{title}\" stating how much I have spent on {category} in total, "
                      "according to the Expenses app.",),
        sample=sample_spending, setup=log_and_delete,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))), ("total", total_noted(phone, p))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["title"], p["total"]],
        tags=("handoff", "finance", "reasoning")),
    # --- out-of-domain hand-offs (split "ood": no train template moves these facts between apps)
    TaskTemplate(
        id="notes.multi_event_location", apps=("calendar", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Create a note titled \"{note_title}\" with the location of my \"{title}\" event.",),
        sample=sample_event_venue,
        checks=lambda phone, p: [("created", bool(created(phone, p["note_title"]))),
                                 ("location", body_has(phone, p["note_title"], [p["location"]]))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["note_title"], p["location"]],
        tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_contact_email", apps=("contacts", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Save {name}'s email address from Contacts in a new note titled \"{name}\".",),
        sample=sample_contact_email,
        checks=lambda phone, p: [("created", bool(created(phone, p["name"]))),
                                 ("email", body_has(phone, p["name"], [p["email"]]))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["name"], p["email"]], tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_sms_code", apps=("sms", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Save the door code {name} texted me in a new note titled \"{title}\".",),
        sample=sample_texted("code", ("Door code", "{first}'s door code", "Code for {first}'s place")),
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("code", body_has(phone, p["title"], [p["value"]]))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["name"], p["title"], p["value"]],
        tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_sms_place", apps=("sms", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Write down where {name} wants to meet in a new note titled \"{title}\".",),
        sample=sample_texted("place", ("Meeting place", "Where to meet {first}", "Meeting {first}")),
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("place", body_has(phone, p["title"], [p["value"]]))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["name"], p["title"], p["value"]],
        tags=("handoff", "create")),
    TaskTemplate(
        id="notes.multi_recipe_servings", apps=("recipes", "notes"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=25,
        instructions=("Make a note titled \"{title}\" saying how many servings {recipe_title} makes.",),
        sample=sample_recipe_servings,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("servings", body_has(phone, p["title"], [p["servings"]]))],
        expected=lambda p: ["notes.notes.n*"], hints=lambda p: [p["recipe_title"], p["title"], p["servings"]],
        tags=("handoff", "create")),
]
