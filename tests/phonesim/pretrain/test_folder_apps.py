"""The folders apps of the pretraining world: their phones and held-out split, templates the solver plays
with the action kinds R7 found missing (typing titles, bodies and searches, long presses, answers), forms
that keep what is typed, the long-press menu and its folder picker, the bin with restore and empty, the
breadcrumbs, the sort dialog, play and stop."""

from __future__ import annotations

import dataclasses

import pytest

from phonesim import Phone, instantiate
from phonesim.actions import Action, ActionType
from phonesim.pretrain import (HELD_OUT_APPS, PHONES, load_pretrain_apps, pretrain_specs, pretrain_templates,
                               trained_apps)
from phonesim.pretrain.folders import BIN_PLACES, DETAIL_STYLES, NAV_STYLES, FolderSpec
from tests.phonesim.conftest import solved, solved_cleanly
from tests.phonesim.pretrain.screen_steps import act, element, family, launched


FOLDER_APPS = [name for name, spec in pretrain_specs().items() if isinstance(spec, FolderSpec)]
HANDWRITTEN = [a for a in FOLDER_APPS if a in PHONES["handmade"]]
FAMILIES = {"open_item", "search_open", "move", "rename", "star", "delete", "restore", "empty_bin", "new_folder",
            "new_item", "query_size", "query_date", "query_count", "sort", "play_stop"}
# every template of every folders app, played along its stored solution (tests/training/base/
# test_world_solutions.py re-solves a sample)
FOLDER_IDS = sorted(t for t in pretrain_templates() if t.split(".")[0] in FOLDER_APPS)


def _texts(phone: Phone) -> list[str]:
    return [e["text"] or e["desc"] for e in phone.observe().elements]


def _items(phone: Phone, app: str) -> dict[str, dict]:
    return phone.logical_state()[app]["items"]


def _titled(phone: Phone, app: str, title: str) -> dict:
    [rec] = [r for r in _items(phone, app).values() if r["title"] == title]
    return rec


def _live(phone: Phone, app: str, folder: str) -> list[dict]:
    return [r for r in _items(phone, app).values() if r["folder"] == folder and not r["trashed"]]


def test_folder_apps_are_a_kind_on_phones_of_their_own_with_some_held_out():
    assert sorted(HANDWRITTEN) == ["fieldbook", "tapeshelf"] and len(FOLDER_APPS) == 32
    assert {a for p in ("folders1", "folders2", "folders3") for a in PHONES[p]} == set(FOLDER_APPS) - set(HANDWRITTEN)
    assert {"tapeshelf", *PHONES["folders3"]} <= set(HELD_OUT_APPS) and "fieldbook" in trained_apps()
    assert not set(PHONES["folders1"] + PHONES["folders2"]) & set(HELD_OUT_APPS)
    specs = [pretrain_specs()[a] for a in FOLDER_APPS]
    assert ({s.nav for s in specs}, {s.detail for s in specs}, {s.bin_place for s in specs}) == (
        set(NAV_STYLES), set(DETAIL_STYLES), set(BIN_PLACES))
    others = {s.label for s in pretrain_specs().values() if not isinstance(s, FolderSpec)}
    assert not others & {s.label for s in specs}
    for app in FOLDER_APPS:
        assert {family(t.id) for t in load_pretrain_apps()[app].templates} == FAMILIES, app


def test_the_root_shows_a_search_field_the_top_folders_with_their_counts_and_the_bin():
    phone = launched("fieldbook")
    for folder in ("Birds", "Mosses", "Beetles", "Ferns"):
        n = len(_live(phone, "fieldbook", folder))
        assert f"{folder}\n{n} {'entry' if n == 1 else 'entries'}" in _texts(phone)
    assert not any(t.startswith("Waders") for t in _texts(phone))  # a subfolder shows in its parent only
    assert {"Search entries", "Bin", "New folder"} <= set(_texts(phone))
    assert "Basket\n3 takes" in _texts(launched("tapeshelf"))  # the other app's bin is a row


@pytest.mark.parametrize("template_id", FOLDER_IDS)
def test_every_folder_template_is_solved_cleanly_with_the_action_kind_it_exercises(template_id):
    task, path = solved_cleanly(template_id, 0)
    kinds = [a.type for a in path]
    name = family(template_id)
    if name in ("search_open", "rename", "new_folder", "new_item"):
        assert ActionType.TYPE in kinds  # the search field, or the forms' fields
    if name == "star":
        assert ActionType.LONG_PRESS in kinds  # the row's menu is the only way
    if name in ("delete", "empty_bin"):
        assert kinds.count(ActionType.CLICK) >= 3  # the menu or bar, then a confirmation
    if task.answer_spec is not None:
        assert ActionType.ANSWER in kinds
    if name == "play_stop":  # it plays on the way, and is stopped at the end
        phone, app, playing = task.make_phone(), template_id.split(".")[0], []
        for action in path:
            phone.step(action)
            playing.append(phone.logical_state()[app]["playing"])
        assert task.params["iid"] in playing and playing[-1] == ""


def test_search_is_the_shorter_way_to_items_in_a_subfolder():
    task, path = solved("fieldbook.search_open", 0)
    assert "/" in _items(task.make_phone(), "fieldbook")[task.params["iid"]]["folder"]
    assert [a.type for a in path] == [ActionType.CLICK, ActionType.TYPE, ActionType.CLICK]  # open, type, tap
    assert path[1].text == task.params["title"]


def test_a_new_item_keeps_its_typed_title_and_body_and_a_new_folder_joins_the_picker():
    phone = launched("fieldbook")
    act(phone, "click", "New folder")
    act(phone, "type", "Folder name", "Owls", starts=True)
    act(phone, "click", "Create")
    assert "Folder created" in _texts(phone) and "Owls\n0 entries" in _texts(phone)
    act(phone, "click", "Beetles", starts=True)
    act(phone, "click", "New entry")
    assert not phone.step(Action("click", element=element(phone, "Save"))).ok  # the guard: no title yet
    act(phone, "type", "Title", "Dor beetle", starts=True)
    act(phone, "type", "Field text", "Two by the old sluice gate.", starts=True)
    act(phone, "click", "Save")
    made = _titled(phone, "fieldbook", "Dor beetle")
    assert (made["id"], made["body"], made["folder"], made["media"]) == ("n1", "Two by the old sluice gate.",
                                                                         "Beetles", False)
    assert "Saved in Beetles" in _texts(phone)  # the toast: the one sign the task is done
    act(phone, "click", "Dor beetle", starts=True)
    assert {"Two by the old sluice gate.", "Kind\nSketch", "Folder\nBeetles"} <= set(_texts(phone))
    act(phone, "click", "Move")
    assert "Move to which folder?" in _texts(phone)
    assert {"Owls", "Waders", "Spores"} <= set(_texts(phone)) and "Beetles" not in _texts(phone)
    act(phone, "click", "Owls")
    assert _titled(phone, "fieldbook", "Dor beetle")["folder"] == "Owls" and "Now in Owls" in _texts(phone)


def test_the_long_press_menu_renames_moves_and_stars_and_starring_is_nowhere_else():
    phone = launched("tapeshelf")
    act(phone, "click", "Etudes", starts=True)
    first = sorted(_live(phone, "tapeshelf", "Etudes"), key=lambda r: r["title"])[0]
    act(phone, "long_press", f"{first['title']}\n", starts=True)
    star = "Unpin" if first["starred"] else "Pin"
    assert {first["title"], "Rename", "Move to…", star, "Delete"} <= set(_texts(phone))
    act(phone, "click", star)
    assert _items(phone, "tapeshelf")[first["id"]]["starred"] is not first["starred"]
    act(phone, "long_press", f"{first['title']}\n", starts=True)
    act(phone, "click", "Rename")
    assert first["title"] in _texts(phone)  # the field starts with the old title
    act(phone, "click", "Clear Name")
    act(phone, "type", "Name", "Canon duet", starts=True)
    act(phone, "click", "Save")
    assert _items(phone, "tapeshelf")[first["id"]]["title"] == "Canon duet" and "Renamed" in _texts(phone)
    act(phone, "long_press", "Canon duet\n", starts=True)
    act(phone, "click", "Move to…")
    act(phone, "click", "Minor")
    assert _items(phone, "tapeshelf")[first["id"]]["folder"] == "Scales/Minor"
    app = load_pretrain_apps()["tapeshelf"]
    assert app.transitions["star"].src == ("root", "folder")  # rows of lists only: the menu is the one way


def test_the_bin_takes_an_item_after_a_confirmation_restores_it_and_empties_after_another():
    phone = launched("fieldbook")
    act(phone, "click", "Mosses", starts=True)
    rec = sorted(_live(phone, "fieldbook", "Mosses"), key=lambda r: r["title"])[0]
    act(phone, "long_press", f"{rec['title']}\n", starts=True)
    act(phone, "click", "Delete")
    assert f"Put “{rec['title']}” in the bin?" in _texts(phone)
    act(phone, "click", "Cancel")
    assert not _items(phone, "fieldbook")[rec["id"]]["trashed"]
    act(phone, "long_press", f"{rec['title']}\n", starts=True)
    act(phone, "click", "Delete")
    act(phone, "click", "Delete")
    assert _items(phone, "fieldbook")[rec["id"]]["trashed"] and "Sent to the bin" in _texts(phone)
    assert not any(t.startswith(f"{rec['title']}\n") for t in _texts(phone))
    phone.step(Action("system_button", button="back"))
    act(phone, "click", "Bin")
    assert "4 entries in the bin" in _texts(phone)
    act(phone, "click", f"{rec['title']}\nfrom Mosses")
    act(phone, "click", "Restore")
    assert not _items(phone, "fieldbook")[rec["id"]]["trashed"] and "Back in Mosses" in _texts(phone)
    act(phone, "click", "Empty bin")
    act(phone, "click", "Cancel")
    assert sum(r["trashed"] for r in _items(phone, "fieldbook").values()) == 3
    act(phone, "click", "Empty bin")
    assert "Empty the bin?" in _texts(phone)
    act(phone, "click", "Empty")
    left = _items(phone, "fieldbook")
    assert not any(r["trashed"] for r in left.values()) and rec["id"] in left  # the restored one stays
    assert {"Nothing to restore", "The bin is empty"} <= set(_texts(phone))


def test_breadcrumbs_lead_back_up_the_tree_and_the_sort_dialog_orders_a_folder():
    phone = launched("fieldbook")
    act(phone, "click", "Birds", starts=True)
    act(phone, "click", "Waders", starts=True)
    assert {"Fieldbook", "Birds", "Waders"} <= set(_texts(phone)) and "Navigate up" not in _texts(phone)
    act(phone, "click", "Fieldbook")
    assert phone.top_page("fieldbook")["screen"] == "root"
    act(phone, "click", "Beetles", starts=True)
    act(phone, "click", "Sort")
    act(phone, "click", "Size")
    assert phone.logical_state()["fieldbook"]["sort"] == "size" and "Ordered by size" in _texts(phone)
    rows = [t.split("\n")[0] for t in _texts(phone) if " kB · " in t]
    sizes = {r["title"]: r["size"] for r in _live(phone, "fieldbook", "Beetles")}
    assert rows == sorted(sizes, key=sizes.get, reverse=True) and any(t.endswith("· by size") for t in _texts(phone))
    act(phone, "click", "Sort")
    act(phone, "click", "Logged")
    assert phone.logical_state()["fieldbook"]["sort"] == "date"
    other = launched("tapeshelf")  # the other layout: an up arrow, no crumbs
    act(other, "click", "Scales", starts=True)
    act(other, "click", "Minor", starts=True)
    assert "Tapeshelf" not in _texts(other)
    act(other, "click", "Navigate up")
    assert other.top_page("tapeshelf")["params"] == {"path": "Scales"}


def test_a_media_item_plays_and_stops_and_counts_its_plays():
    phone = launched("fieldbook")
    rec = next(r for r in _items(phone, "fieldbook").values() if r["media"] and not r["trashed"])
    act(phone, "type", "Search entries", rec["title"])
    act(phone, "click", f"{rec['title']}\n", starts=True)
    assert {"Status\nStopped", "Play", "Kind\nCall"} <= set(_texts(phone))
    act(phone, "click", "Play")
    assert {"Status\nPlaying", "Stop", f"Playing {rec['title']}"} <= set(_texts(phone))
    assert phone.logical_state()["fieldbook"]["playing"] == rec["id"]
    act(phone, "click", "Stop")
    assert "Playback stopped" in _texts(phone) and phone.logical_state()["fieldbook"]["playing"] == ""
    assert _items(phone, "fieldbook")[rec["id"]]["plays"] == rec["plays"] + 1


def test_instances_of_a_folder_template_vary_with_the_seed():
    assert len({instantiate("fieldbook.move", s).instruction for s in range(8)}) > 4
    assert len({instantiate("fieldbook.query_count", s).answer_spec.gold for s in range(8)}) > 1


@pytest.mark.parametrize("change,error", [
    ({"folders": ("Birds/Waders", "Birds", "Mosses")}, "before its parent"),
    ({"folders": ("Birds", "Mosses", "Beetles")}, "no subfolder"),
    ({"new_folders": ("Mosses",)}, "folder names repeat"),
    ({"new_titles": ("Royal fern",)}, "titles repeat"),
    ({"nav": "tabs"}, "unknown layout"),
])
def test_a_folder_spec_that_cannot_make_its_tasks_is_refused(change, error):
    with pytest.raises(ValueError, match=error):
        dataclasses.replace(pretrain_specs()["fieldbook"], **change)
