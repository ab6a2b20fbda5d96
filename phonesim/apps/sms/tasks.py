"""Messages task templates, plus cross-app ones that end in Messages (calendar / recorder /
contacts → sms)."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.expenses.tasks import log_and_delete
from phonesim.apps.sms.world import PLACES, messages, now
from phonesim.dates import counted, read_time
from phonesim.task_template import TaskTemplate, extend

REPLIES = ("On my way!", "Running 10 minutes late", "Can we move it to tomorrow?", "Thanks, see you there",
           "Call me when you can")


def threads(phone) -> dict[str, dict]:
    return phone.world("sms")["threads"]


def thread_messages(phone, cid: str) -> list[dict]:
    return messages(phone.world("sms"), phone.data("sms"), cid)


def sent(phone, cid: str) -> list[str]:
    return [m["text"] for m in phone.data("sms")["sent"].get(cid, [])]


def pick_thread(fact: str | None = None):
    def sample(rng: random.Random, phone) -> dict:
        t = rng.choice([t for t in threads(phone).values() if fact is None or fact in t["facts"]])
        return {"cid": t["cid"], "name": t["name"]}
    return sample


def with_text(base):
    return extend(base, lambda rng, phone, p: {"text": rng.choice(REPLIES)})


def pick_stranger(rng: random.Random, phone) -> dict:
    people = phone.world("sms")["people"]
    cid = rng.choice([cid for cid in sorted(people) if cid not in threads(phone)])
    return {"cid": cid, "name": people[cid]["name"], "text": rng.choice(REPLIES)}


def sample_code_sender(rng, phone) -> dict:
    t = rng.choice([t for t in threads(phone).values() if "code" in t["facts"]])
    return {"code": t["facts"]["code"], "cid": t["cid"]}


def with_replies(base):
    """Adds replies I already sent to 1..4 other conversations (`send_replies`), which moves them to
    the top of the inbox, so the list searched for the thread differs between instances."""
    def add(rng: random.Random, phone, p) -> dict:
        others = sorted(cid for cid in threads(phone) if cid != p["cid"])
        return {"replied": {cid: rng.choice(REPLIES) for cid in rng.sample(others, rng.randint(1, 4))}}
    return extend(base, add)


def send_replies(phone, p) -> None:
    sent = phone.data("sms")["sent"]
    for cid, text in p["replied"].items():
        sent[cid] = [{"from": "me", "text": text, "at": now(phone.state["data"]["system"])}]


def fact(phone, p, key: str) -> str:
    return threads(phone)[p["cid"]]["facts"][key]


def sent_to(p) -> list[str]:
    return [f"sms.threads.{p['cid']}"]


def sample_event_time(rng, phone) -> dict:
    from phonesim.apps.calendar.tasks import pick_event
    p = pick_event()(rng, phone)
    p.update(pick_thread()(rng, phone))
    p["start"] = phone.world("calendar")["events"][p["eid"]]["start"]
    return p


def sample_longest_recording(rng, phone) -> dict:
    from phonesim.apps.recorder.world import live_recordings
    p = pick_thread()(rng, phone)
    longest = max(live_recordings(phone.world("recorder"), phone.data("recorder")), key=lambda r: r["seconds"])
    p["recording"] = longest["name"]
    return p


def sample_share_number(rng, phone) -> dict:
    p = pick_thread()(rng, phone)
    people = phone.world("sms")["people"]
    other = rng.choice([cid for cid in sorted(people) if cid != p["cid"]])
    p.update(other=people[other]["name"], number=people[other]["phone"])
    return p


def sample_event_location(rng, phone) -> dict:
    from phonesim.apps.calendar.tasks import event, pick_event
    p = pick_event()(rng, phone)
    p.update(pick_thread()(rng, phone), location=event(phone, p["eid"])["location"])
    return p


def sample_contact_email(rng, phone) -> dict:
    from phonesim.apps.contacts.tasks import contact, pick
    other = pick(lambda c: bool(c.get("email")))(rng, phone)
    p = pick_thread()(rng, phone)
    p.update(other=other["name"], email=contact(phone, other["cid"])["email"])
    return p


def sample_recipe_servings(rng, phone) -> dict:
    from phonesim.apps.recipes.tasks import attr, pick
    r = pick(rng, phone)
    p = pick_thread()(rng, phone)
    p.update(recipe_title=r["title"], servings=str(attr(phone, r["recipe"], "servings")))
    return p


def sample_note_fact(rng, phone) -> dict:
    from phonesim.apps.notes.tasks import fact as note_fact
    from phonesim.apps.notes.tasks import pick_fact
    p = pick_fact(rng, phone)
    p.update(pick_thread()(rng, phone))
    p["value"] = note_fact(phone, p)
    return p


def sample_spending_for(rng, phone) -> dict:
    from phonesim.apps.notes.tasks import sample_spending
    p = sample_spending(rng, phone)
    p.update(pick_thread()(rng, phone))
    return p


def total_sent(phone, p) -> bool:
    from phonesim.answers import parse_numbers
    gold = float(p["total"].lstrip("$").replace(",", ""))
    return any(any(abs(v - gold) < 0.005 for v in parse_numbers(t)) for t in sent(phone, p["cid"]))


def digits(s: str) -> str:
    return "".join(ch for ch in s if ch.isdigit())


TEMPLATES = [
    TaskTemplate(
        id="sms.send", apps=("sms",), objective="operate", composition="sequential", difficulty=2, split="train",
        step_budget=15, instructions=("Text {name}: \"{text}\"", "Send {name} the message \"{text}\"."),
        sample=with_text(pick_thread()),
        checks=lambda phone, p: [("sent", p["text"] in sent(phone, p["cid"]))],
        expected=sent_to, hints=lambda p: [p["name"], p["text"]], tags=("social", "create")),
    TaskTemplate(
        id="sms.new_conversation", apps=("sms",), objective="operate", composition="sequential", difficulty=3,
        split="test", step_budget=20,
        instructions=("Start a new conversation with {name} and send \"{text}\".",
                      "Message {name} (we have not chatted yet): \"{text}\""),
        sample=pick_stranger,
        checks=lambda phone, p: [("sent", p["text"] in sent(phone, p["cid"]))],
        expected=sent_to, hints=lambda p: [p["name"], p["text"]], tags=("social", "create", "search")),
    TaskTemplate(
        id="sms.delete_thread", apps=("sms",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Delete my conversation with {name}.", "Remove the message thread with {name}."),
        sample=pick_thread(), checks=lambda phone, p: [("deleted", not thread_messages(phone, p["cid"]))],
        expected=sent_to, hints=lambda p: [p["name"]], tags=("delete",)),
    TaskTemplate(
        id="sms.query_place", apps=("sms",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15, instructions=("Where did {name} suggest we meet?",),
        sample=pick_thread("place"),
        answer=lambda phone, p: AnswerSpec("choice", fact(phone, p, "place"), choices=PLACES,
                                           hint="the place name"),
        evidence=lambda p, spec: [f"meet at {spec.gold}."], hints=lambda p: [p["name"]], tags=("extract",)),
    TaskTemplate(
        id="sms.query_code", apps=("sms",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15, instructions=("What door code did {name} text me?",),
        sample=with_replies(pick_thread("code")), setup=send_replies,
        answer=lambda phone, p: AnswerSpec("number", float(fact(phone, p, "code")), hint="the 4-digit code"),
        evidence=lambda p, spec: [f"door code is {spec.gold:g}"], hints=lambda p: [p["name"]], tags=("extract",)),
    TaskTemplate(
        id="sms.query_meet_time", apps=("sms",), objective="query", composition="deep_dive", difficulty=3,
        split="train", step_budget=15, instructions=("At what time did {name} say they would see me?",),
        sample=pick_thread("time"),
        answer=lambda phone, p: AnswerSpec("time", fact(phone, p, "time"), hint="a time (HH:MM, 24-hour)"),
        evidence=lambda p, spec: [f"See you at {spec.gold}!"], hints=lambda p: [p["name"]], tags=("extract",)),
    TaskTemplate(
        id="sms.query_count", apps=("sms",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15, instructions=("How many messages are in my conversation with {name}?",),
        sample=pick_thread(),
        answer=lambda phone, p: AnswerSpec("number", float(len(thread_messages(phone, p["cid"]))), hint="a number"),
        evidence=lambda p, spec: [counted(int(spec.gold), "message")], hints=lambda p: [p["name"]], tags=("extract",)),
    TaskTemplate(
        id="sms.query_code_sender", apps=("sms",), objective="query", composition="deep_dive", difficulty=3,
        split="test", step_budget=15, instructions=("Who texted me the door code {code}?",),
        sample=with_replies(sample_code_sender), setup=send_replies,
        answer=lambda phone, p: AnswerSpec("choice", threads(phone)[p["cid"]]["name"],
                                           choices=tuple(sorted(t["name"] for t in threads(phone).values())),
                                           hint="the contact's full name"),
        evidence=lambda p, spec: [f"door code is {p['code']}"], hints=lambda p: [p["code"]],
        tags=("extract", "search")),
    TaskTemplate(
        id="sms.hybrid_place_reply", apps=("sms",), objective="hybrid", composition="sequential", difficulty=3,
        split="test", step_budget=20,
        instructions=("Tell me where {name} wants to meet and reply to them \"{text}\".",),
        sample=with_text(pick_thread("place")),
        checks=lambda phone, p: [("replied", p["text"] in sent(phone, p["cid"]))],
        answer=lambda phone, p: AnswerSpec("choice", fact(phone, p, "place"), choices=PLACES, hint="the place name"),
        evidence=lambda p, spec: [f"meet at {spec.gold}."],
        expected=sent_to, hints=lambda p: [p["name"], p["text"]], tags=("extract", "social")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="sms.multi_event_time", apps=("calendar", "sms"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Text {name} the start time of my \"{title}\" event (just the time, e.g. 14:30).",
                      "Check when \"{title}\" starts in Calendar and send that time to {name}."),
        sample=sample_event_time,
        checks=lambda phone, p: [("time sent", any(read_time(t) == p["start"] for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["start"]], tags=("handoff", "social")),
    TaskTemplate(
        id="sms.multi_recording_name", apps=("recorder", "sms"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=30,
        instructions=("Send {name} the name of my longest voice recording.",
                      "Find my longest recording in Recorder and text its name to {name}."),
        sample=sample_longest_recording,
        checks=lambda phone, p: [("name sent", any(p["recording"].casefold() in t.casefold()
                                                   for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["recording"]], tags=("handoff", "reasoning")),
    TaskTemplate(
        id="sms.multi_share_number", apps=("contacts", "sms"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Text {name} the phone number of {other}.", "Send {other}'s number to {name}."),
        sample=sample_share_number,
        checks=lambda phone, p: [("number sent", any(digits(p["number"]) in digits(t) for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["number"]], tags=("handoff",)),
    # --- out-of-domain hand-offs (split "ood": no train template moves these facts between apps)
    TaskTemplate(
        id="sms.multi_event_location", apps=("calendar", "sms"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Tell {name} where my \"{title}\" event takes place.",
                      "Look up the location of \"{title}\" in Calendar and text it to {name}."),
        sample=sample_event_location,
        checks=lambda phone, p: [("location sent", any(p["location"].casefold() in t.casefold()
                                                       for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["location"]], tags=("handoff", "social")),
    TaskTemplate(
        id="sms.multi_contact_email", apps=("contacts", "sms"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Text {name} the email address of {other}.", "Send {other}'s email address to {name}."),
        sample=sample_contact_email,
        checks=lambda phone, p: [("email sent", any(p["email"].casefold() in t.casefold()
                                                    for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["email"]], tags=("handoff",)),
    TaskTemplate(
        id="sms.multi_recipe_servings", apps=("recipes", "sms"), objective="operate", composition="transfer",
        difficulty=3, split="ood", step_budget=30,
        instructions=("Text {name} how many servings the {recipe_title} recipe makes.",),
        sample=sample_recipe_servings,
        checks=lambda phone, p: [("servings sent", any(digits(t) == p["servings"]
                                                       for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["name"], p["servings"]], tags=("handoff",)),
    TaskTemplate(
        id="sms.multi_note_fact", apps=("notes", "sms"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=30,
        instructions=("Send {name} the {label} written in my note \"{title}\".",),
        sample=sample_note_fact,
        checks=lambda phone, p: [("fact sent", any(p["value"].casefold() in t.casefold()
                                                   for t in sent(phone, p["cid"])))],
        expected=sent_to, hints=lambda p: [p["title"], p["name"], p["value"]], tags=("handoff", "search")),
    TaskTemplate(
        id="sms.multi_expense_total", apps=("expenses", "sms"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=30,
        instructions=("Text {name} how much I have spent on {category} in total, according to Expenses.",),
        sample=sample_spending_for, setup=log_and_delete,
        checks=lambda phone, p: [("total sent", total_sent(phone, p))],
        expected=sent_to, hints=lambda p: [p["name"], p["total"]], tags=("handoff", "finance", "reasoning")),
]
