"""Files app: folder tree, sort by size, copy name conflicts, rename guard, delete confirmation."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.files.world import FOLDERS, all_files, human_size, make_world
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0)
    p.step(Action("open_app", app="Files"))
    return p


def texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def files(phone: Phone) -> list[dict]:
    return all_files(phone.world("files"), phone.data("files"))


def test_world_fills_every_folder_deterministically():
    w = make_world(2)
    assert w == make_world(2) and w != make_world(3)
    assert {f["folder"] for f in w["files"].values()} == set(FOLDERS)
    assert len(w["files"]) >= 40


def test_human_size_uses_si_units():
    assert human_size(999) == "1 kB" and human_size(2_450_000) == "2.5 MB" and human_size(1_671_500_000) == "1.67 GB"


def test_sort_by_size_puts_the_largest_file_first(phone):
    tap(phone, "Download")
    tap(phone, "Sort")
    tap(phone, "Size (largest first)")
    here = sorted((f for f in files(phone) if f["folder"] == "Download"), key=lambda f: -f["size"])
    rows = [t.split("\n")[0] for t in texts(phone) if "\n" in t]  # Download has files only, no subfolders
    assert rows[:3] == [f["name"] for f in here[:3]]


def test_copy_into_a_folder_with_the_same_name_gets_a_suffix(phone):
    f = next(f for f in files(phone) if f["folder"] == "Download")
    tap(phone, "Download")
    for _ in range(2):
        assert phone.step(Action("long_press", element=find(phone, f["name"]))).ok
        tap(phone, "Copy to…")
        assert tap(phone, "Documents").ok
    copies = sorted(x["name"] for x in files(phone) if x["folder"] == "Documents" and x["id"].startswith("n"))
    stem, ext = f["name"].rsplit(".", 1)
    assert copies == sorted([f["name"], f"{stem} (1).{ext}"])


def test_rename_to_an_existing_name_is_refused(phone):
    a, b = [f for f in files(phone) if f["folder"] == "Music"][:2]
    tap(phone, "Music")
    tap(phone, a["name"])
    tap(phone, "Rename")
    tap(phone, "Clear File name")
    phone.step(Action("type", text=b["name"], element=find(phone, "File name")))
    refused = tap(phone, "Rename")
    assert not refused.ok and "already exists" in refused.reason


def test_delete_from_details_confirms_then_goes_back(phone):
    f = next(f for f in files(phone) if f["folder"] == "Movies")
    tap(phone, "Movies")
    tap(phone, f["name"])
    tap(phone, "Delete")
    assert "Delete 1 item?" in texts(phone) and phone.data("files")["deleted"] == {}
    tap(phone, "Delete")
    assert phone.data("files")["deleted"] == {f["id"]: True} and phone.current_screen == "folder"
