"""Files task templates: delete / rename / move / copy, typed look-ups (size, date, counts,
largest file) and a hybrid "report the largest download and delete it"."""

from __future__ import annotations

import random

from phonesim import records
from phonesim.answers import AnswerSpec
from phonesim.apps.files.world import FOLDERS, all_files, get_file, human_size, parent, subfolders
from phonesim.dates import month_day_year
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate
from phonesim.variety import recount


FILES = Lookup("files", all_files, get_file)
files, file, attr = FILES.records, FILES.record, FILES.attr


def pick(rng: random.Random, phone, where=lambda f: True) -> dict:
    """A file whose name is unique on the device."""
    everyone = files(phone)
    names = [f["name"] for f in everyone]
    f = rng.choice([f for f in everyone if names.count(f["name"]) == 1 and where(f)])
    return {"fid": f["id"], "name": f["name"], "folder": f["folder"]}


def pick_big(rng, phone) -> dict:
    return pick(rng, phone, lambda f: f["size"] >= 1_000_000)


def with_dest(rng, phone) -> dict:
    p = pick(rng, phone)
    p["dest"] = rng.choice([d for d in FOLDERS if d != p["folder"]])
    return p


def with_new_name(rng, phone) -> dict:
    p = pick(rng, phone)
    stem, ext = p["name"].rsplit(".", 1)
    p["new_name"] = f"{rng.choice(['old', 'final', 'backup', 'shared', 'keep'])}_{stem}.{ext}"
    return p


def sample_folder(rng, phone) -> dict:
    path = rng.choice(FOLDERS)
    return {"path": path, "top": parent(path) or path}


def pick_largest(folder_choices):
    def sample(rng, phone) -> dict:
        path = rng.choice(folder_choices)
        here = sorted((f for f in files(phone) if f["folder"] == path), key=lambda f: -f["size"])
        return {"path": path, "top": parent(path) or path, "fid": here[0]["id"],
                "choices": [f["name"] for f in here]}
    return sample


def sample_trimmed_folder(rng, phone) -> dict:
    """A folder and how many files it holds (0..12; `move_in_or_delete`): files from other folders
    move in, or some of its own are deleted, so its item count differs between instances."""
    p = sample_folder(rng, phone)
    everyone = files(phone)
    return p | recount(rng, [f["id"] for f in everyone if f["folder"] == p["path"]],
                       [f["id"] for f in everyone if f["folder"] != p["path"]], 0, 12)


def move_in_or_delete(phone, p) -> None:
    for fid in p["join"]:
        FILES.edit(phone, fid, folder=p["path"])
    for fid in p["leave"]:
        records.delete(phone.data("files"), fid)


def pick_grown(folder_choices):
    """A folder and one of its files, which grows to a drawn size above the folder's largest
    (`grow`), so the largest file and its size differ between instances. Below 1 GB, which the
    app would show in GB, not the MB the task asks for."""
    def sample(rng, phone) -> dict:
        path = rng.choice(folder_choices)
        here = [f for f in files(phone) if f["folder"] == path]
        f = rng.choice(here)
        return {"path": path, "top": parent(path) or path, "fid": f["id"],
                "size": min(int(max(x["size"] for x in here) * rng.uniform(1.1, 1.8)), 999_000_000)}
    return sample


def grow(phone, p) -> None:
    FILES.edit(phone, p["fid"], size=p["size"])


def size_mb(phone, fid: str) -> float:
    return float(human_size(attr(phone, fid, "size")).split()[0])


def copies(phone, p) -> list[dict]:
    return [f for f in files(phone) if f["id"].startswith("n") and f["folder"] == p["dest"] and f["name"] == p["name"]]


def path(p) -> str:
    return f"files.files.{p['fid']}"


TEMPLATES = [
    TaskTemplate(
        id="files.delete", apps=("files",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Delete the file {name}.", "Remove {name} from the phone's storage."),
        sample=pick, checks=lambda phone, p: [("deleted", file(phone, p["fid"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["name"]], tags=("delete", "search")),
    TaskTemplate(
        id="files.rename", apps=("files",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Rename the file {name} to {new_name}.", "Change the name of {name} to {new_name}."),
        sample=with_new_name, checks=lambda phone, p: [("name", attr(phone, p["fid"], "name") == p["new_name"])],
        expected=lambda p: [path(p) + ".name"], hints=lambda p: [p["name"], p["new_name"]], tags=("edit",)),
    TaskTemplate(
        id="files.move", apps=("files",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Move {name} to the {dest} folder.", "Put the file {name} into {dest}."),
        sample=with_dest, checks=lambda phone, p: [("moved", attr(phone, p["fid"], "folder") == p["dest"])],
        expected=lambda p: [path(p) + ".folder", path(p) + ".name"], hints=lambda p: [p["name"]],
        tags=("edit", "search")),
    TaskTemplate(
        id="files.copy", apps=("files",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Copy {name} into the {dest} folder.", "Make a copy of {name} in {dest}, keeping the original."),
        sample=with_dest,
        checks=lambda phone, p: [("copied", bool(copies(phone, p))),
                                 ("original kept", attr(phone, p["fid"], "folder") == p["folder"])],
        expected=lambda p: ["files.files.n*"], hints=lambda p: [p["name"]], tags=("create", "search")),
    TaskTemplate(
        id="files.query_size", apps=("files",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("How big is the file {name}, in MB?", "What is the size of {name} in megabytes?"),
        sample=pick_big, answer=lambda phone, p: AnswerSpec("number", size_mb(phone, p["fid"]), tolerance=0.05,
                                                            hint="a number of MB"),
        evidence=lambda p, spec: [f"{spec.gold:.1f} MB"], hints=lambda p: [p["name"]], tags=("extract", "search")),
    TaskTemplate(
        id="files.query_date", apps=("files",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15,
        instructions=("When was {name} last modified?", "On what date was the file {name} last changed?"),
        sample=pick, answer=lambda phone, p: AnswerSpec("date", attr(phone, p["fid"], "modified"),
                                                        hint="a date (YYYY-MM-DD)"),
        evidence=lambda p, spec: [month_day_year(spec.gold)], hints=lambda p: [p["name"]], tags=("extract", "search")),
    TaskTemplate(
        id="files.query_count", apps=("files",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15,
        instructions=("How many items are in the {path} folder?", "Count the items (files and folders) in {path}."),
        sample=sample_trimmed_folder, setup=move_in_or_delete,
        answer=lambda phone, p: AnswerSpec("number", float(len(subfolders(p["path"])) + sum(
            f["folder"] == p["path"] for f in files(phone))), hint="a number"),
        evidence=lambda p, spec: [f"{spec.gold:g} items · "], tags=("extract", "nav")),
    TaskTemplate(
        id="files.query_largest", apps=("files",), objective="query", composition="deep_dive", difficulty=3,
        split="train", step_budget=15,
        instructions=("Which file in {path} is the largest?", "Find the biggest file in the {path} folder."),
        sample=pick_largest(FOLDERS),
        answer=lambda phone, p: AnswerSpec("choice", attr(phone, p["fid"], "name"), choices=tuple(p["choices"]),
                                           hint="the file name"),
        evidence=lambda p, spec: ["sorted by size"], tags=("extract", "reasoning", "nav")),
    TaskTemplate(
        id="files.hybrid_largest_delete", apps=("files",), objective="hybrid", composition="sequential",
        difficulty=4, split="test", step_budget=20,
        instructions=("Find the largest file in {path}, tell me its size in MB, then delete it to free space.",),
        sample=pick_grown(("Download", "Movies", "Music", "Pictures")), setup=grow,
        checks=lambda phone, p: [("deleted", file(phone, p["fid"]) is None)],
        answer=lambda phone, p: AnswerSpec("number", size_mb(phone, p["fid"]), tolerance=0.05, hint="a number of MB"),
        evidence=lambda p, spec: [f"{spec.gold:.1f} MB"], expected=lambda p: [path(p)],
        tags=("extract", "reasoning", "delete")),
    TaskTemplate(
        id="files.query_folder", apps=("files",), objective="query", composition="deep_dive", difficulty=1,
        split="train", step_budget=15,
        instructions=("Which folder is {name} stored in?", "Where on the phone is the file {name}?"),
        sample=pick, answer=lambda phone, p: AnswerSpec("choice", p["folder"], choices=FOLDERS,
                                                        hint="the folder path, e.g. Documents/Work"),
        evidence=lambda p, spec: [f"{spec.gold} · "], hints=lambda p: [p["name"]], tags=("extract", "search")),
]
