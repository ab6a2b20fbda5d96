"""Files screens and navigation graph (AOSP Files-like): storage root with search, folder
browser with sort, file details, rename, move / copy to a folder, delete with confirmation."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.files.world import FOLDERS, all_files, get_file, human_size, subfolders
from phonesim.context import Ctx
from phonesim.dates import TODAY, month_day_year
from phonesim.widgets import (
    Page, action_bar, button, field_row, header, icon_button, info, item, paragraph, search_bar, tap,
)

SORTS = {"name": "Name", "size": "Size (largest first)", "date": "Date (newest first)"}
LISTS = ("browse", "folder")
FOLDER_GLYPHS = {"Download": "⬇", "Music": "♫", "Pictures": "▣", "Movies": "◧", "Documents/Receipts": "$"}


def folder_glyph(path: str) -> str:
    return FOLDER_GLYPHS.get(path, "❏")


def _file_rows(files: list[dict[str, Any]], show_folder: bool) -> list:
    rows = []
    for f in files:
        sub = f"{human_size(f['size'])} · {month_day_year(f['modified'])}"
        rows.append(item(f["name"], f"{f['folder']} · {sub}" if show_folder else sub,
                         glyph=f["name"].rsplit(".", 1)[-1],
                         on_tap=tap("open_file", fid=f["id"]), long_tap=tap("file_menu", fid=f["id"]),
                         rid=f"file_{f['id']}"))
    return rows


def _folder_row(ctx: Ctx, path: str, files: list[dict[str, Any]]) -> Any:
    n = len(subfolders(path)) + sum(1 for f in files if f["folder"] == path)
    return item(path.rpartition("/")[2], f"{n} items", glyph=folder_glyph(path), chevron=True,
                on_tap=tap("open_folder", path=path), rid=f"folder_{path.replace('/', '_')}")


def build_browse(ctx: Ctx) -> Page:
    files = all_files(ctx.world, ctx.data)
    q = ctx.field("q").strip().casefold()
    rows = [search_bar("q", "Search files", ctx.field("q"), ctx.focused("q"))]
    if q:
        found = [f for f in files if q in f["name"].casefold()]
        rows.append(header(f"{len(found)} results" if found else "No files found"))
        rows += _file_rows(found, show_folder=True)
    else:
        used = sum(f["size"] for f in files)
        rows += [info("Internal storage", f"{human_size(used)} used by {len(files)} files", glyph="⛁", rid="storage"),
                 header("Folders")]
        rows += [_folder_row(ctx, path, files) for path in subfolders("")]
    return Page("Files", rows, up=False)


def build_folder(ctx: Ctx) -> Page:
    path, sort = ctx.params["path"], ctx.ui("sort", "name")
    files = all_files(ctx.world, ctx.data)
    here = [f for f in files if f["folder"] == path]
    if sort == "size":
        here = sorted(here, key=lambda f: (-f["size"], f["id"]))
    elif sort == "date":
        here = sorted(here, key=lambda f: (f["modified"], f["id"]), reverse=True)
    subs = subfolders(path)
    rows = [header(f"{len(subs) + len(here)} items · sorted by {SORTS[sort].split(' ')[0].lower()}")]
    rows += [_folder_row(ctx, p, files) for p in subs]
    rows += _file_rows(here, show_folder=False)
    if not subs and not here:
        rows.append(paragraph("This folder is empty."))
    return Page(path.rpartition("/")[2], rows, actions=[icon_button("more", "Sort", tap("ask_sort"))])


def build_file(ctx: Ctx) -> Page:
    f = get_file(ctx.world, ctx.data, ctx.params["fid"])
    if f is None:
        return Page("File", [paragraph("This file no longer exists.")])
    fid = f["id"]
    return Page(f["name"], [
        action_bar([("Rename", "edit", tap("open_rename", fid=fid)),
                    ("Move", "share", tap("ask_dest", fid=fid, op="move")),
                    ("Copy", "plus", tap("ask_dest", fid=fid, op="copy")),
                    ("Delete", "close", tap("ask_delete", fid=fid))]),
        info("Name", f["name"], glyph="edit", rid="name"),
        info("Location", f"Internal storage/{f['folder']}", glyph=folder_glyph(f["folder"]), rid="location"),
        info("Size", human_size(f["size"]), glyph="⛁", rid="size"),
        info("Modified", month_day_year(f["modified"]), glyph="▦", rid="modified"),
    ])


def build_rename(ctx: Ctx) -> Page:
    return Page("Rename", [field_row("name", "File name", ctx.field("name"), ctx.focused("name")),
                           button("Rename", tap("rename"))], actions=[icon_button("check", "Rename", tap("rename"))])


def open_rename(ctx: Ctx) -> None:
    ctx.set_field("name", get_file(ctx.world, ctx.data, ctx.params["fid"])["name"])


# --- effects ----------------------------------------------------------------------------------

ask_sort = effects.choice_dialog("Sort by", "sort", SORTS, "set_sort", default="name", label=SORTS.get)


set_sort = effects.set_ui_from_tap("sort", rescroll=True)


def file_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    f = get_file(ctx.world, ctx.data, p["fid"])
    fid = f["id"]
    ctx.dialog(f["name"], options=[("Rename", tap("open_rename", fid=fid), False),
                                   ("Move to…", tap("ask_dest", fid=fid, op="move"), False),
                                   ("Copy to…", tap("ask_dest", fid=fid, op="copy"), False),
                                   ("Delete", tap("ask_delete", fid=fid), False)])


def ask_dest(ctx: Ctx, p: dict[str, Any]) -> None:
    f = get_file(ctx.world, ctx.data, p["fid"])
    targets = [d for d in FOLDERS if d != f["folder"]]
    ctx.dialog("Move to" if p["op"] == "move" else "Copy to",
               options=[(d, tap(p["op"], fid=f["id"], dest=d), False) for d in targets],
               buttons=[("Cancel", tap("dismiss"))])


def _free_name(ctx: Ctx, name: str, folder: str) -> str:
    taken = {f["name"] for f in all_files(ctx.world, ctx.data) if f["folder"] == folder}
    stem, dot, ext = name.rpartition(".")
    k, candidate = 1, name
    while candidate in taken:
        candidate = f"{stem} ({k}){dot}{ext}"
        k += 1
    return candidate


def move(ctx: Ctx, p: dict[str, Any]) -> None:
    f = dict(get_file(ctx.world, ctx.data, p["fid"]))
    f.update(folder=p["dest"], name=_free_name(ctx, f["name"], p["dest"]))
    records.put(ctx.data, f)
    ctx.toast(f"Moved to {p['dest']}")


def copy(ctx: Ctx, p: dict[str, Any]) -> None:
    src = get_file(ctx.world, ctx.data, p["fid"])
    records.put(ctx.data, dict(src, id=records.new_id(ctx.data), folder=p["dest"],
                               name=_free_name(ctx, src["name"], p["dest"]), modified=TODAY.isoformat()))
    ctx.toast(f"Copied to {p['dest']}")


ask_delete = effects.ask_delete(get_file, "fid", "Delete 1 item?",
                                lambda f: f"{f['name']} will be permanently deleted.", detail="file")


delete = effects.delete("fid", "Deleted 1 item")


def guard_rename(ctx: Ctx, p: dict[str, Any]) -> str | None:
    name = ctx.field("name").strip()
    if not name or "/" in name:
        return "enter a valid file name"
    f = get_file(ctx.world, ctx.data, ctx.params["fid"])
    if any(o["name"] == name and o["folder"] == f["folder"] and o["id"] != f["id"]
           for o in all_files(ctx.world, ctx.data)):
        return "a file with this name already exists"
    return None


def rename(ctx: Ctx, p: dict[str, Any]) -> None:
    f = dict(get_file(ctx.world, ctx.data, ctx.params["fid"]))
    f["name"] = ctx.field("name").strip()
    records.put(ctx.data, f)


SCREENS = {s.id: s for s in [
    Screen("browse", build_browse, doc="Files"),
    Screen("folder", build_folder, params=("path",), doc="Folder"),
    Screen("file", build_file, params=("fid",), doc="File details"),
    Screen("rename", build_rename, params=("fid",), doc="Rename", on_open=open_rename),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_folder", LISTS, "folder"),
    Transition("open_file", LISTS, "file"),
    Transition("open_rename", LISTS + ("file",), "rename"),
    Transition("ask_sort", ("folder",), None, ask_sort),
    Transition("set_sort", ("folder",), None, set_sort),
    Transition("file_menu", LISTS, None, file_menu),
    Transition("ask_dest", LISTS + ("file",), None, ask_dest),
    Transition("move", LISTS + ("file",), None, move),
    Transition("copy", LISTS + ("file",), None, copy),
    *effects.delete_transitions(LISTS, "file", ask_delete, delete),
    Transition("rename", ("rename",), BACK, rename, guard_rename),
    Transition("dismiss", ("*",), None, None),
]}
