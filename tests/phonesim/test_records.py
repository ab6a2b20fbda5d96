"""Shared editable-overlay helpers (`phonesim.records`) and the contacts merged-list cache."""

from __future__ import annotations

from phonesim import Phone, records
from phonesim.apps.contacts.world import all_contacts, get_contact, make_world


def test_merged_applies_edits_in_world_order_then_created_and_skips_deleted():
    base = {"a": {"id": "a", "v": 1}, "b": {"id": "b", "v": 2}, "c": {"id": "c", "v": 3}}
    ov = records.overlay()
    records.edited(base, ov, "b", v=20)
    records.put(ov, {"id": records.new_id(ov), "v": 4})
    records.delete(ov, "a")
    assert [r["id"] for r in records.merged(base, ov)] == ["b", "c", "n1"]
    assert records.get(base, ov, "b")["v"] == 20 and base["b"]["v"] == 2
    assert records.get(base, ov, "a") is None and records.new_id(ov) == "n2"


def test_lookup_reads_and_edits_one_phones_records():
    phone = Phone(world_seed=0)
    people = records.Lookup("contacts", all_contacts, get_contact)
    cid = people.records(phone)[0]["id"]
    people.edit(phone, cid, company="Initech")
    assert people.attr(phone, cid, "company") == "Initech"
    records.delete(phone.data("contacts"), cid)
    assert people.attr(phone, cid, "company") is None


def test_contacts_cache_does_not_share_records_between_phones():
    world = make_world(0)
    cid = next(iter(world["contacts"]))
    first = {**records.overlay(), "put": {cid: dict(world["contacts"][cid], company="Globex")}}
    second = {**records.overlay(), "put": {cid: dict(world["contacts"][cid], company="Globex")}}
    all_contacts(world, first)  # fills the cache for this overlay content
    first["put"][cid]["company"] = "Changed in place"  # a live edit on the first phone only
    mine = next(c for c in all_contacts(world, second) if c["id"] == cid)
    assert mine["company"] == "Globex" and mine is second["put"][cid]
