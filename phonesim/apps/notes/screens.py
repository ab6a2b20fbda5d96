"""Notes screens and navigation graph (Markor/Joplin-like): folders with counts, note lists
with search, note view, create / edit / rename, move to folder, delete with confirmation."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.notes.world import FOLDERS, all_notes, get_note
from phonesim.context import Ctx
from phonesim.dates import TODAY, month_day_year
from phonesim.widgets import Page, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tap

DEFAULT_FOLDER = FOLDERS[0]


def _snippet(text: str) -> str:
    return text if len(text) <= 38 else text[:37].rstrip() + "…"


def _note_rows(notes: list[dict[str, Any]]) -> list:
    return [item(n["title"] or "Untitled", f"{month_day_year(n['modified'])} · {_snippet(n['body'])}", glyph="edit",
                 on_tap=tap("open_note", nid=n["id"]), long_tap=tap("note_menu", nid=n["id"]), rid=f"note_{n['id']}")
            for n in notes]


def _search(ctx: Ctx, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    q = ctx.field("q").strip().casefold()
    return [n for n in notes if q in n["title"].casefold() or q in n["body"].casefold()] if q else notes


def _new_note_fab(into: str):
    return fab("plus", "New note", tap("open_create", into=into))


def build_folders(ctx: Ctx) -> Page:
    notes = all_notes(ctx.world, ctx.data)
    rows = [search_bar("q", "Search all notes", ctx.field("q"), ctx.focused("q"))]
    if ctx.field("q").strip():
        found = _search(ctx, notes)
        rows.append(header(f"{len(found)} results" if found else "No notes found"))
        rows += _note_rows(found)
    else:
        rows.append(item("All notes", f"{len(notes)} notes", glyph="▤", on_tap=tap("open_all"), rid="all_notes"))
        rows.append(header("Folders"))
        for f in FOLDERS:
            n = sum(1 for x in notes if x["folder"] == f)
            rows.append(item(f, f"{n} notes", glyph="group", on_tap=tap("open_folder", folder=f), chevron=True,
                             rid=f"folder_{f}"))
    return Page("Notes", rows, up=False, fab=_new_note_fab(DEFAULT_FOLDER))


def build_all(ctx: Ctx) -> Page:
    shown = _search(ctx, all_notes(ctx.world, ctx.data))
    rows = [search_bar("q", "Search notes", ctx.field("q"), ctx.focused("q")),
            header(f"{len(shown)} notes" if shown else "No notes found"), *_note_rows(shown)]
    return Page("All notes", rows, fab=_new_note_fab(DEFAULT_FOLDER))


def build_folder(ctx: Ctx) -> Page:
    folder = ctx.params["folder"]
    shown = _search(ctx, [n for n in all_notes(ctx.world, ctx.data) if n["folder"] == folder])
    rows = [search_bar("q", f"Search {folder}", ctx.field("q"), ctx.focused("q")),
            header(f"{len(shown)} notes in {folder}" if shown else "No notes here"), *_note_rows(shown)]
    return Page(folder, rows, fab=_new_note_fab(folder))


def build_note(ctx: Ctx) -> Page:
    n = get_note(ctx.world, ctx.data, ctx.params["nid"])
    if n is None:
        return Page("Note", [paragraph("This note no longer exists.")])
    nid = n["id"]
    return Page(n["title"] or "Untitled", [
        paragraph(n["body"] or "(empty note)"),
        info("Folder", n["folder"], glyph="group", rid="folder"),
        info("Modified", month_day_year(n["modified"]), glyph="▦", rid="modified"),
    ], actions=[icon_button("edit", "Edit", tap("open_edit", nid=nid)),
                icon_button("more", "More options", tap("note_menu", nid=nid))])


def build_edit(ctx: Ctx) -> Page:
    return Page("Edit note", [field_row("title", "Title", ctx.field("title"), ctx.focused("title")),
                              field_row("body", "Text", ctx.field("body"), ctx.focused("body")),
                              button("Save", tap("save"))],
                actions=[icon_button("check", "Save", tap("save"))])


def build_create(ctx: Ctx) -> Page:
    return Page("New note", [field_row("title", "Title", ctx.field("title"), ctx.focused("title")),
                             field_row("body", "Text", ctx.field("body"), ctx.focused("body")),
                             info("Folder", ctx.params["into"], glyph="group", rid="target_folder"),
                             button("Save", tap("save"))],
                actions=[icon_button("check", "Save", tap("save"))])


def build_rename(ctx: Ctx) -> Page:
    return Page("Rename note", [field_row("title", "New title", ctx.field("title"), ctx.focused("title")),
                                button("Rename", tap("rename"))],
                actions=[icon_button("check", "Rename", tap("rename"))])


def open_edit(ctx: Ctx) -> None:
    n = get_note(ctx.world, ctx.data, ctx.params["nid"])
    ctx.set_field("title", n["title"])
    ctx.set_field("body", n["body"])


def open_rename(ctx: Ctx) -> None:
    ctx.set_field("title", get_note(ctx.world, ctx.data, ctx.params["nid"])["title"])


# --- effects ----------------------------------------------------------------------------------

def _put(ctx: Ctx, nid: str, **changes: Any) -> None:
    n = dict(get_note(ctx.world, ctx.data, nid))
    n.update(changes, modified=TODAY.isoformat())
    records.put(ctx.data, n)


def note_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    nid = p["nid"]
    ctx.menu([("Rename", tap("open_rename", nid=nid)), ("Move to…", tap("ask_move", nid=nid)),
              ("Delete", tap("ask_delete", nid=nid))])


def ask_move(ctx: Ctx, p: dict[str, Any]) -> None:
    n = get_note(ctx.world, ctx.data, p["nid"])
    ctx.dialog("Move to folder", options=[(f, tap("move", nid=n["id"], folder=f), f == n["folder"]) for f in FOLDERS],
               buttons=[("Cancel", tap("dismiss"))])


def move(ctx: Ctx, p: dict[str, Any]) -> None:
    _put(ctx, p["nid"], folder=p["folder"])
    ctx.toast(f"Moved to {p['folder']}")


ask_delete = effects.ask_delete(get_note, "nid", "Delete this note?",
                                lambda n: f"\u201c{n['title']}\u201d will be deleted permanently.", detail="note")


delete = effects.delete("nid", "Note deleted")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if (ctx.field("title").strip() or ctx.field("body").strip()) else "the note is empty"


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    title, body = ctx.field("title").strip(), ctx.field("body").strip()
    if ctx.page["screen"] == "edit":
        _put(ctx, ctx.params["nid"], title=title, body=body)
    else:
        records.put(ctx.data, {"id": records.new_id(ctx.data), "title": title, "body": body,
                               "folder": ctx.params["into"], "modified": TODAY.isoformat()})
    ctx.toast("Note saved")


def guard_rename(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if ctx.field("title").strip() else "a title cannot be empty"


def rename(ctx: Ctx, p: dict[str, Any]) -> None:
    _put(ctx, ctx.params["nid"], title=ctx.field("title").strip())


LISTS = ("folders", "all", "folder")

SCREENS = {s.id: s for s in [
    Screen("folders", build_folders, doc="Notes"),
    Screen("all", build_all, doc="All notes"),
    Screen("folder", build_folder, params=("folder",), doc="Folder"),
    Screen("note", build_note, params=("nid",), doc="Note"),
    Screen("edit", build_edit, params=("nid",), doc="Edit note", on_open=open_edit),
    Screen("create", build_create, params=("into",), doc="New note"),
    Screen("rename", build_rename, params=("nid",), doc="Rename note", on_open=open_rename),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_all", ("folders",), "all"),
    Transition("open_folder", ("folders",), "folder"),
    Transition("open_note", LISTS, "note"),
    Transition("open_create", LISTS, "create"),
    Transition("open_edit", ("note",), "edit"),
    Transition("note_menu", LISTS + ("note",), None, note_menu),
    Transition("open_rename", LISTS + ("note",), "rename"),
    Transition("ask_move", LISTS + ("note",), None, ask_move),
    Transition("move", LISTS + ("note",), None, move),
    *effects.delete_transitions(LISTS, "note", ask_delete, delete),
    Transition("save", ("edit", "create"), BACK, save, guard_save),
    Transition("rename", ("rename",), BACK, rename, guard_rename),
    Transition("dismiss", ("*",), None, None),
]}
