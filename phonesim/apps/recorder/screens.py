"""Recorder screens: recordings list with search, player (rename, delete to trash), rename
form, trash (restore, delete forever, empty), and the record screen whose start / stop /
save stages are page state (no real audio or time)."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.recorder.world import all_recordings, get_recording, live_recordings, mmss
from phonesim.context import Ctx
from phonesim.dates import TODAY, counted, long_date, short_date
from phonesim.widgets import (
    Page, action_bar, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tap,
)


def rec_row(r: dict[str, Any], on_tap, long_tap=None) -> Any:
    return item(r["name"], f"{mmss(r['seconds'])} · {short_date(r['date'])}", on_tap=on_tap, long_tap=long_tap,
                glyph="sound", rid=f"recording_{r['id']}")


def build_list(ctx: Ctx) -> Page:
    q = ctx.field("q")
    recs = live_recordings(ctx.world, ctx.data)
    if q.strip():
        recs = [r for r in recs if q.casefold().strip() in r["name"].casefold()]
    rows = [search_bar("q", "Search recordings", q, ctx.focused("q")),
            header(counted(len(recs), "recording") if recs else "No recordings")]
    rows += [rec_row(r, tap("open_player", rec=r["id"]), tap("rec_menu", rec=r["id"])) for r in recs]
    return Page("Recorder", rows, up=False, actions=[icon_button("delete", "Trash", tap("open_trash"))],
                fab=fab("sound", "Record", tap("open_record")))


def build_player(ctx: Ctx) -> Page:
    r = get_recording(ctx.world, ctx.data, ctx.params["rec"])
    if r is None or r["trashed"]:
        return Page("Recording", [paragraph("This recording was moved to the trash.")])
    playing = ctx.ui("playing", False)
    return Page(r["name"], [
        info("Duration", mmss(r["seconds"]), rid="duration"),
        info("Recorded on", long_date(r["date"]), rid="date"),
        info("Status", "Playing" if playing else "Paused", rid="status"),
        action_bar([("Pause" if playing else "Play", "sound", tap("play")),
                    ("Rename", "edit", tap("open_rename", rec=r["id"])),
                    ("Delete", "delete", tap("trash_open", rec=r["id"]))]),
    ])


def build_rename(ctx: Ctx) -> Page:
    return Page("Rename recording", [field_row("name", "Name", ctx.field("name"), ctx.focused("name")),
                                     button("Save", tap("save_name"), enabled=bool(ctx.field("name").strip()))])


def open_rename(ctx: Ctx) -> None:
    ctx.set_field("name", get_recording(ctx.world, ctx.data, ctx.params["rec"])["name"])


def build_trash(ctx: Ctx) -> Page:
    gone = [r for r in all_recordings(ctx.world, ctx.data) if r["trashed"]]
    rows = [header(f"{counted(len(gone), 'recording')} in trash" if gone else "Trash is empty")]
    rows += [rec_row(r, tap("trash_menu", rec=r["id"])) for r in gone]
    if gone:
        rows.append(button("Empty trash", tap("ask_empty"), primary=False))
    return Page("Trash", rows)


def default_name(ctx: Ctx) -> str:
    return f"Recording {len(all_recordings(ctx.world, ctx.data)) + 1}"


def build_record(ctx: Ctx) -> Page:
    stage = ctx.ui("stage", "idle")
    if stage == "idle":
        rows = [paragraph("Tap Start to record a voice memo."), button("Start recording", tap("start"))]
    elif stage == "recording":
        rows = [info("Status", "● Recording", rid="status"), button("Stop", tap("stop"))]
    else:
        rows = [info("Length", mmss(take_seconds(ctx)), rid="length"),
                field_row("name", "Name", ctx.field("name"), ctx.focused("name"), hint=default_name(ctx)),
                button("Save", tap("save_take")), button("Discard", tap("discard"), primary=False)]
    return Page("New recording", rows)


def take_seconds(ctx: Ctx) -> int:
    """Length of a new take: deterministic, since no real time passes in the simulator."""
    return 30 + 7 * ctx.data["next"]


# --- effects ----------------------------------------------------------------------------------

rec_menu = effects.record_dialog(get_recording, "rec", [("Rename", "open_rename"), ("Delete", "trash")])


trash = effects.edit_record("recordings", "rec", "Moved to trash", trashed=True)


def play(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.set_ui("playing", not ctx.ui("playing", False))


def save_name(ctx: Ctx, p: dict[str, Any]) -> None:
    records.edited(ctx.world["recordings"], ctx.data, ctx.params["rec"], name=ctx.field("name").strip())
    ctx.toast("Recording renamed")


trash_menu = effects.record_dialog(get_recording, "rec", [("Restore", "restore"), ("Delete forever", "purge")])


restore = effects.edit_record("recordings", "rec", "Recording restored", trashed=False)


purge = effects.delete("rec", "Deleted forever")


def ask_empty(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.dialog("Empty trash?", "Recordings in the trash will be deleted forever.",
               buttons=[("Cancel", tap("dismiss")), ("Empty", tap("empty_trash"))])


def empty_trash(ctx: Ctx, p: dict[str, Any]) -> None:
    for r in all_recordings(ctx.world, ctx.data):
        if r["trashed"]:
            records.delete(ctx.data, r["id"])


def stage(name: str):
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.set_ui("stage", name)
    return effect


def save_take(ctx: Ctx, p: dict[str, Any]) -> None:
    name = ctx.field("name").strip() or default_name(ctx)
    seconds = take_seconds(ctx)
    records.put(ctx.data, {"id": records.new_id(ctx.data), "name": name, "seconds": seconds,
                           "date": TODAY.isoformat(), "trashed": False})
    ctx.toast("Recording saved")


SCREENS = {s.id: s for s in [
    Screen("list", build_list, doc="Recorder"),
    Screen("player", build_player, params=("rec",), doc="Recording"),
    Screen("rename", build_rename, params=("rec",), doc="Rename recording", on_open=open_rename),
    Screen("trash", build_trash, doc="Trash"),
    Screen("record", build_record, doc="New recording"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_player", ("list",), "player"),
    Transition("rec_menu", ("list",), None, rec_menu),
    Transition("open_rename", ("list", "player"), "rename"),
    Transition("save_name", ("rename",), BACK, save_name),
    Transition("trash", ("list",), None, trash),
    Transition("trash_open", ("player",), BACK, trash),
    Transition("play", ("player",), None, play),
    Transition("open_trash", ("list",), "trash"),
    Transition("trash_menu", ("trash",), None, trash_menu),
    Transition("restore", ("trash",), None, restore),
    Transition("purge", ("trash",), None, purge),
    Transition("ask_empty", ("trash",), None, ask_empty),
    Transition("empty_trash", ("trash",), None, empty_trash),
    Transition("open_record", ("list",), "record"),
    Transition("start", ("record",), None, stage("recording")),
    Transition("stop", ("record",), None, stage("stopped")),
    Transition("save_take", ("record",), BACK, save_take),
    Transition("discard", ("record",), BACK),
    Transition("dismiss", ("*",), None, None),
]}
