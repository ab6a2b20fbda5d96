"""Snapshot/restore/fork, determinism, pool, navigation graph, rendering."""

from __future__ import annotations

import random

from phonesim import Phone, PhonePool, instantiate, load_apps
from phonesim.actions import Action
from phonesim.state import canonical_json, diff_paths, flatten
from tests.phonesim.conftest import solved


def test_snapshot_actions_restore_is_byte_identical():
    task, path = solved("contacts.edit_phone")
    phone = task.make_phone(size=(360, 800))
    phone.step(Action("open_app", app="Contacts"))
    snap = phone.snapshot()
    png = phone.observe().png
    for a in path:
        phone.step(a)
    assert canonical_json(phone.state) != canonical_json(snap)
    phone.restore(snap)
    assert canonical_json(phone.state) == canonical_json(snap)
    assert phone.observe().png == png


def test_fork_is_independent_and_deterministic():
    task, path = solved("settings.rename_device")
    a = task.make_phone(size=(360, 800))
    b = a.fork()
    for p in (a, b):
        for act in path:
            p.step(act)
    assert a.state == b.state and a.observe().png == b.observe().png
    b.step(Action("system_button", button="home"))
    assert a.current_app != b.current_app


def test_snapshot_is_json_and_small():
    phone = instantiate("contacts.create", 0).make_phone()
    text = canonical_json(phone.snapshot())
    assert len(text) < 4000  # runtime overlay only; world data is shared


def test_pool_reset_and_fork_group():
    task = instantiate("settings.toggle_wifi", 2)
    pool = PhonePool(4, task)
    pool[0].step(Action("open_app", app="Settings"))
    group = pool.fork_group(0, 3)
    assert all(p.current_app == "settings" for p in group)
    pool.reset(0)
    assert pool[0].state == task.initial and pool[1].state == task.initial


def test_every_screen_is_routable_from_home_and_routes_use_declared_transitions():
    for app in load_apps().values():
        for screen in app.screens:
            route = app.route(app.home, screen)
            assert route is not None, f"{app.name}: {screen} unreachable"
            assert all(t in app.transitions for t in route)
    assert load_apps()["contacts"].route("list", "edit") == ["open_detail", "open_edit"]


def test_screenshot_size_configurable_and_dark_theme_changes_pixels():
    phone = Phone(size=(720, 1600))
    phone.step(Action("open_app", app="Settings"))
    light = phone.observe().screenshot
    assert light.size == (720, 1600) and len(light.getcolors(100000)) > 10
    phone.state["data"]["system"]["dark_theme"] = True
    phone.invalidate()
    dark = phone.observe().screenshot
    assert light.getpixel((360, 1000)) != dark.getpixel((360, 1000))


def _reference_diff(before, after) -> list[str]:
    a, b = flatten(before), flatten(after)
    return sorted(p for p in a.keys() | b.keys() if a.get(p, "<missing>") != b.get(p, "<missing>"))


def _mutate(rng: random.Random, value):
    """A copy of a JSON tree with a few random edits: values changed, keys and items added or removed,
    containers swapped for scalars and back."""
    if isinstance(value, dict):
        out = {k: (_mutate(rng, v) if rng.random() < 0.3 else v) for k, v in value.items() if rng.random() > 0.1}
        if rng.random() < 0.2:
            out[f"new{rng.randrange(3)}"] = rng.choice([1, "x", [2, {"y": 3}], {}, None])
        return out
    if isinstance(value, list):
        out = [_mutate(rng, v) if rng.random() < 0.3 else v for v in value]
        return out[: rng.randrange(len(out) + 1)] if rng.random() < 0.2 else out + ([7] if rng.random() < 0.2 else [])
    return rng.choice([value, value, 0, "s", True, {"k": 1}, [1]])


def test_diff_paths_matches_comparing_every_flattened_leaf():
    phone = Phone(0)
    state = phone.logical_state()
    rng = random.Random(0)
    for _ in range(200):
        after = _mutate(rng, state)
        assert diff_paths(state, after) == _reference_diff(state, after)
    assert diff_paths({"a": {"b": 1}}, {"a": [1]}) == ["a.0", "a.b"] and diff_paths({}, []) == []
