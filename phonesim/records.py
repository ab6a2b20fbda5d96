"""Editable collections over read-only world records (apps/README.md §1 overlay pattern),
shared by every app with user-editable records: `{"put": {id: record}, "deleted": {id: true},
"next": n}` merged over the world's `{id: record}` on read. Records are replaced whole, never
mutated in place. `Lookup` gives task templates the same merged reads from a phone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Record = dict[str, Any]


def overlay() -> dict[str, Any]:
    """An empty overlay: nothing edited, created or deleted."""
    return {"put": {}, "deleted": {}, "next": 1}


def get(base: dict[str, Record], ov: dict[str, Any], rid: str) -> Record | None:
    """Record `rid` with edits applied, or None if deleted or unknown."""
    if rid in ov["deleted"]:
        return None
    return ov["put"].get(rid) or base.get(rid)


def merged(base: dict[str, Record], ov: dict[str, Any]) -> list[Record]:
    """World records (edits applied) in world order, then created ones; deleted ones left out."""
    put, gone = ov["put"], ov["deleted"]
    out = [put.get(rid, rec) for rid, rec in base.items() if rid not in gone]
    return out + [rec for rid, rec in put.items() if rid not in base and rid not in gone]


def put(ov: dict[str, Any], record: Record) -> None:
    ov["put"][record["id"]] = record


def delete(ov: dict[str, Any], rid: str) -> None:
    ov["put"].pop(rid, None)
    ov["deleted"][rid] = True


def new_id(ov: dict[str, Any], prefix: str = "n") -> str:
    """A fresh id for a created record ("n1", "n2", ...); ids are never reused."""
    n = ov["next"]
    ov["next"] = n + 1
    return f"{prefix}{n}"


def edited(base: dict[str, Record], ov: dict[str, Any], rid: str, **changes: Any) -> Record:
    """Store a copy of record `rid` with `changes` applied and return it."""
    rec = dict(get(base, ov, rid))
    rec.update(changes)
    put(ov, rec)
    return rec


@dataclass(frozen=True)
class Lookup:
    """Task-side reads of one app's merged records from a phone: `all` and `get` are the app's
    `(world, data) -> list` and `(world, data, id) -> record | None` functions (world.py)."""

    app: str
    all: Callable[[dict[str, Any], dict[str, Any]], list[Record]]
    get: Callable[[dict[str, Any], dict[str, Any], str], Record | None]
    overlay_key: str | None = None  # the overlay is `data[overlay_key]`, not the app data itself

    def records(self, phone: Any) -> list[Record]:
        return self.all(phone.world(self.app), phone.data(self.app))

    def record(self, phone: Any, rid: str) -> Record | None:
        return self.get(phone.world(self.app), phone.data(self.app), rid)

    def attr(self, phone: Any, rid: str, key: str) -> Any:
        """A record's field, or None once the record is deleted (checks must not raise)."""
        rec = self.record(phone, rid)
        return None if rec is None else rec[key]

    def edit(self, phone: Any, rid: str, **changes: Any) -> None:
        """Store a copy of record `rid` with `changes` applied (task setup injecting a state)."""
        data = phone.data(self.app)
        rec = dict(self.record(phone, rid))
        rec.update(changes)
        put(data[self.overlay_key] if self.overlay_key else data, rec)
