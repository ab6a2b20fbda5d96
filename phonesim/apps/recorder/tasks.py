"""Recorder task templates (record, rename, trash / restore / purge, queries)."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.recorder.world import all_recordings, get_recording, live_recordings, mmss
from phonesim.dates import counted, long_date
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate, extend
from phonesim.variety import recount, regroup

NEW_NAMES = ("Shopping reminder", "Lecture 7", "Voice note for Sam", "Melody sketch", "Parking spot", "Todo ideas")


RECORDINGS = Lookup("recorder", all_recordings, get_recording)
recordings, recording = RECORDINGS.records, RECORDINGS.record


def live(phone) -> list[dict]:
    return live_recordings(phone.world("recorder"), phone.data("recorder"))


def pick(trashed: bool = False):
    def sample(rng: random.Random, phone) -> dict:
        r = rng.choice([r for r in recordings(phone) if r["trashed"] == trashed])
        return {"rec": r["id"], "name": r["name"]}
    return sample


def trashed(phone, rec: str) -> bool | None:
    """Whether the recording is in the trash; None once deleted forever."""
    r = recording(phone, rec)
    return None if r is None else r["trashed"]


def with_new_name(base):
    return extend(base, lambda rng, phone, p: {"new": rng.choice(NEW_NAMES)})


def created(phone) -> list[dict]:
    return [r for r in recordings(phone) if r["id"].startswith("n") and not r["trashed"]]


def sample_trash(lo: int, hi: int):
    """Sampler: how many recordings are in the trash (lo..hi) and which; `set_trash` applies it."""
    def sample(rng: random.Random, phone) -> dict:
        rs = recordings(phone)
        return recount(rng, [r["id"] for r in rs if r["trashed"]], [r["id"] for r in rs if not r["trashed"]], lo, hi)
    return sample


set_trash = regroup(RECORDINGS, lambda p: {"trashed": True}, lambda p: {"trashed": False})


def then_pick(base, trashed: bool = False):
    """Adds one recording that is in the trash (or not) once `base`'s trash is set up."""
    def add(rng: random.Random, phone, p) -> dict:
        now = {r["id"]: r["trashed"] for r in recordings(phone)}
        now.update({rid: True for rid in p["join"]} | {rid: False for rid in p["leave"]})
        r = rng.choice([r for r in recordings(phone) if now[r["id"]] == trashed])
        return {"rec": r["id"], "name": r["name"]}
    return extend(base, add)


def path(p, key: str = "") -> str:
    return f"recorder.recordings.{p['rec']}" + (f".{key}" if key else "")


def longest(phone) -> dict:
    return max(live(phone), key=lambda r: r["seconds"])


def trash_count(phone) -> int:
    return sum(r["trashed"] for r in recordings(phone))


TEMPLATES = [
    TaskTemplate(
        id="recorder.record_named", apps=("recorder",), objective="operate", composition="sequential",
        difficulty=3, split="train", step_budget=20,
        instructions=("Record a voice memo and save it as \"{new}\".", "Make a new recording named \"{new}\"."),
        sample=lambda rng, phone: {"new": rng.choice(NEW_NAMES)},
        checks=lambda phone, p: [("recorded", bool(created(phone))),
                                 ("named", any(r["name"] == p["new"] for r in created(phone)))],
        expected=lambda p: ["recorder.recordings.n*"], hints=lambda p: [p["new"]], tags=("create",)),
    TaskTemplate(
        id="recorder.record_quick", apps=("recorder",), objective="operate", composition="sequential",
        difficulty=1, split="test", step_budget=15,
        instructions=("Record a new voice memo.", "Make a quick audio recording and keep it."),
        sample=sample_trash(0, 6), setup=set_trash, checks=lambda phone, p: [("recorded", bool(created(phone)))],
        expected=lambda p: ["recorder.recordings.n*"], tags=("create",)),
    TaskTemplate(
        id="recorder.rename", apps=("recorder",), objective="operate", composition="deep_dive", difficulty=2,
        split="train", step_budget=20,
        instructions=("Rename the recording \"{name}\" to \"{new}\".", "Change the name of \"{name}\" to \"{new}\"."),
        sample=with_new_name(pick()),
        checks=lambda phone, p: [("renamed", (recording(phone, p["rec"]) or {}).get("name") == p["new"])],
        expected=lambda p: [path(p, "name")], hints=lambda p: [p["new"]], tags=("edit",)),
    TaskTemplate(
        id="recorder.delete", apps=("recorder",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Delete the recording \"{name}\".", "Move \"{name}\" to the trash."),
        sample=then_pick(sample_trash(0, 5)), setup=set_trash,
        checks=lambda phone, p: [("in trash", trashed(phone, p["rec"]) is True)],
        expected=lambda p: [path(p, "trashed")], tags=("delete",)),
    TaskTemplate(
        id="recorder.restore", apps=("recorder",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Restore \"{name}\" from the trash.", "I deleted \"{name}\" by mistake — bring it back."),
        sample=pick(trashed=True),
        checks=lambda phone, p: [("restored", trashed(phone, p["rec"]) is False)],
        expected=lambda p: [path(p, "trashed")], tags=("edit", "explore")),
    TaskTemplate(
        id="recorder.delete_forever", apps=("recorder",), objective="operate", composition="sequential",
        difficulty=3, split="test", step_budget=15,
        instructions=("Permanently delete \"{name}\" from the recorder's trash.",),
        sample=then_pick(sample_trash(1, 6), trashed=True), setup=set_trash,
        checks=lambda phone, p: [("purged", recording(phone, p["rec"]) is None)],
        expected=lambda p: [path(p)], tags=("delete", "explore")),
    TaskTemplate(
        id="recorder.query_duration", apps=("recorder",), objective="query", composition="atomic", difficulty=2,
        split="train", step_budget=15, instructions=("How long is the recording \"{name}\", in seconds?",),
        sample=pick(),
        answer=lambda phone, p: AnswerSpec("number", float(recording(phone, p["rec"])["seconds"]), tolerance=1,
                                           hint="a number of seconds"),
        evidence=lambda p, spec: [f"{p['name']}\n{mmss(int(spec.gold))}"], tags=("extract", "reasoning")),
    TaskTemplate(
        id="recorder.query_date", apps=("recorder",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15, instructions=("On what date did I record \"{name}\"?",),
        sample=then_pick(sample_trash(0, 5)), setup=set_trash,
        answer=lambda phone, p: AnswerSpec("date", recording(phone, p["rec"])["date"], hint="a date (YYYY-MM-DD)"),
        evidence=lambda p, spec: [long_date(spec.gold)], tags=("extract",)),
    TaskTemplate(
        id="recorder.hybrid_length_delete", apps=("recorder",), objective="hybrid", composition="sequential",
        difficulty=3, split="train", step_budget=20,
        instructions=("Tell me how many seconds \"{name}\" lasts, then move it to the trash.",),
        sample=pick(), checks=lambda phone, p: [("in trash", trashed(phone, p["rec"]) is True)],
        answer=lambda phone, p: AnswerSpec("number", float(recording(phone, p["rec"])["seconds"]), tolerance=1,
                                           hint="a number of seconds"),
        evidence=lambda p, spec: [f"{p['name']}\n{mmss(int(spec.gold))}"],
        expected=lambda p: [path(p, "trashed")], tags=("extract", "delete", "reasoning")),
    TaskTemplate(
        id="recorder.query_longest", apps=("recorder",), objective="query", composition="sequential",
        difficulty=3, split="train", step_budget=15, instructions=("Which of my recordings is the longest?",),
        sample=lambda rng, phone: {},
        answer=lambda phone, p: AnswerSpec("choice", longest(phone)["name"],
                                           choices=tuple(sorted(r["name"] for r in live(phone))),
                                           hint="the recording's name"),
        evidence=lambda p, spec: [f"{spec.gold}\n"], tags=("extract", "reasoning")),
    TaskTemplate(
        id="recorder.query_trash_count", apps=("recorder",), objective="query", composition="sequential",
        difficulty=1, split="test", step_budget=15, instructions=("How many recordings are in the trash?",),
        sample=sample_trash(0, 9), setup=set_trash,
        answer=lambda phone, p: AnswerSpec("number", float(trash_count(phone)), hint="a number"),
        evidence=lambda p, spec: [f"{counted(int(spec.gold), 'recording')} in trash" if spec.gold
                                  else "Trash is empty"],
        tags=("extract", "nav")),
]
