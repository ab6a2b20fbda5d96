"""Editable collections over read-only world records (README §1 overlay pattern), shared by
the productivity apps: `{"put": {id: record}, "deleted": {id: true}, "next": n}` merged over
the world's `{id: record}` on read. Records are replaced whole, never mutated in place."""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def overlay() -> dict[str, Any]:
    return {"put": {}, "deleted": {}, "next": 1}


def get(base: dict[str, Record], ov: dict[str, Any], rid: str) -> Record | None:
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
    n = ov["next"]
    ov["next"] = n + 1
    return f"{prefix}{n}"


def edited(base: dict[str, Record], ov: dict[str, Any], rid: str, **changes: Any) -> Record:
    """Store a copy of record `rid` with `changes` applied and return it."""
    rec = dict(get(base, ov, rid))
    rec.update(changes)
    put(ov, rec)
    return rec
