"""Recorder world data: seeded voice recordings (name, length, date; two already in the
trash) and the runtime overlay: created, renamed, trashed, restored or purged recordings."""

from __future__ import annotations

import random
from typing import Any

from phonesim import records
from phonesim.dates import day

NAMES = ["Biology lecture", "Meeting notes", "Song idea", "Interview with landlord", "Grocery list", "Podcast draft",
         "Guitar riff", "Birthday message", "Standup recap", "Call with bank", "Bird song", "Speech rehearsal",
         "Book summary", "Dream journal"]
N_RECORDINGS = 10


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"recorder:{seed}")
    names = rng.sample(NAMES, N_RECORDINGS)
    lengths = rng.sample(range(8, 45 * 60), N_RECORDINGS)  # distinct, so "the longest" is unique
    offsets = sorted(rng.sample(range(-60, 0), N_RECORDINGS))
    trashed = set(rng.sample(range(N_RECORDINGS), 2))
    recs = {}
    for i, (name, secs, off) in enumerate(zip(names, lengths, offsets)):
        rid = f"r{i + 1}"
        recs[rid] = {"id": rid, "name": name, "seconds": secs, "date": day(off), "trashed": i in trashed}
    return {"recordings": recs}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_recordings(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every stored recording (trash included), newest first."""
    return sorted(records.merged(world["recordings"], data), key=lambda r: (r["date"], r["id"]), reverse=True)


def live_recordings(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in all_recordings(world, data) if not r["trashed"]]


def get_recording(world: dict[str, Any], data: dict[str, Any], rec: str) -> dict[str, Any] | None:
    return records.get(world["recordings"], data, rec)


def mmss(seconds: int) -> str:
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    return {"recordings": {r["id"]: r for r in all_recordings(world, data)}}
