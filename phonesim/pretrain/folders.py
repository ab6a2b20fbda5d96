"""The pretraining world's third app kind: *folders* apps, whose items sit in a tree of folders (field
journals, practice tapes, clipping boxes...), built from one declarative `FolderSpec`: the target's
files, notes and recorder are of this kind, and R7 (docs/base-ceiling.md) found that a base pretrained
without such screens picks the wrong kind of action on them. These apps show the kind's layouts under
names, words and entries of their own:

- the root: a search field over every item, the top folders with their item counts, the bin (an app-bar
  icon or a row), a floating button that makes a folder;
- a folder: breadcrumbs or an up arrow, a header with its count and sort order, its subfolders and items
  (size and date), a Sort icon (a dialog), a floating button that makes an item in it;
- an item's page: kind, size, date and folder as labelled values, then its text, or, for a media item,
  its length, its status and a Play / Stop button; optionally an action bar (rename, move, delete);
- the long-press menu of an item row: rename, move (a folder picker dialog), star or unstar, delete
  (a confirmation, then the item goes to the bin; starring is nowhere else);
- the bin: restore or erase an item (a dialog), empty it (a confirmation);
- forms: a new folder (a name), a new item (a title and a body typed in), a rename;
- a toast after every change, the only sign that a task is done.

Widgets, dialogs, toasts and the record overlay are phonesim's own. Three layout knobs (`FolderSpec.nav`,
`.detail`, `.bin_place`) and the app's own words vary what sits where.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from phonesim import records
from phonesim.app import BACK, App, Screen, Transition
from phonesim.context import Ctx
from phonesim.dates import month_day_year
from phonesim.pretrain.collection import check_layout, check_new_titles
from phonesim.pretrain.timed import DATES
from phonesim.widgets import (Page, action_bar, button, fab, field_row, header, icon_button, info, item, paragraph,
                              search_bar, tabs, tap)

NAV_STYLES = ("crumbs", "up")  # a folder's way up: a breadcrumb row, or the app bar's up arrow
DETAIL_STYLES = ("bar", "plain")  # an item page with an action bar, or with its values only (long press)
BIN_PLACES = ("icon", "row")  # the bin: an app-bar icon on the root, or a row below the folders
SORTS = ("name", "size", "date")
MEDIA_SHARE = 0.35  # of the world's items are media items (played, not read)


@dataclass(frozen=True)
class FolderSpec:
    """One folders app: identity, the words it uses, its folder tree, its items and its layout."""

    name: str
    label: str
    package: str
    color: str
    glyph: str
    noun: str  # one item, as instructions name it ("entry")
    plural: str
    folders: tuple[str, ...]  # paths: "Birds", "Birds/Waders" (a subfolder's parent comes first)
    titles: tuple[str, ...]  # the world's items, one each
    new_titles: tuple[str, ...]  # titles a create or rename task asks for (never in the world)
    new_folders: tuple[str, ...]  # names a new-folder task asks for
    bodies: tuple[str, ...]  # the text items' texts
    new_bodies: tuple[str, ...]  # texts a create task types
    text_kind: str = "Text"  # the two kinds of item, as the page's Kind row reads
    media_kind: str = "Clip"
    folder_word: str = "Folder"
    star_word: str = "Star"  # the long-press menu's entry; "Un" + its lower case undoes it
    starred_word: str = "Starred"  # a starred item's row says so
    bin_word: str = "Bin"
    date_label: str = "Modified"
    title_label: str = "Title"
    body_label: str = "Text"
    nav: str = "crumbs"
    detail: str = "bar"
    bin_place: str = "icon"

    def __post_init__(self) -> None:
        check_layout(self.name, (self.nav, NAV_STYLES), (self.detail, DETAIL_STYLES), (self.bin_place, BIN_PLACES))
        names = [p.rpartition("/")[2] for p in self.folders]
        if len(set(names) | set(self.new_folders)) != len(names) + len(self.new_folders):
            raise ValueError(f"app {self.name}: folder names repeat, or a new folder name is already one")
        if any("/" in p and p.rpartition("/")[0] not in self.folders[:i] for i, p in enumerate(self.folders)):
            raise ValueError(f"app {self.name}: a subfolder comes before its parent")
        if not any("/" in p for p in self.folders):
            raise ValueError(f"app {self.name}: no subfolder (search is the shorter way only to items in one)")
        check_new_titles(self.name, self.titles, self.new_titles)
        if len(self.titles) < len(self.folders) + 6:
            raise ValueError(f"app {self.name}: {len(self.titles)} items for {len(self.folders)} folders")

    def sort_label(self, key: str) -> str:
        return {"name": self.title_label, "size": "Size", "date": self.date_label}[key]

    def amount(self, n: int) -> str:
        return f"{n} {self.noun if n == 1 else self.plural}"


def folder_name(path: str) -> str:
    return path.rpartition("/")[2]


# --- world ---------------------------------------------------------------------------------------

def make_world_fn(spec: FolderSpec):
    def make_world(seed: int) -> dict[str, Any]:
        rng = random.Random(f"{spec.name}:{seed}")
        titles = rng.sample(spec.titles, len(spec.titles))
        places = list(spec.folders) + [rng.choice(spec.folders) for _ in titles[len(spec.folders):]]
        binned = set(rng.sample(range(len(spec.folders), len(titles)), 3))  # never a folder's only item
        items = {}
        for i, (title, folder) in enumerate(zip(titles, places)):
            media = rng.random() < MEDIA_SHARE
            rec = {"id": f"i{i + 1}", "title": title, "folder": folder, "date": rng.choice(DATES),
                   "starred": rng.random() < 0.25, "trashed": i in binned, "media": media}
            if media:
                rec.update(size=rng.randint(180, 9000), seconds=rng.randint(12, 600), plays=rng.randint(0, 9))
            else:
                rec.update(size=rng.randint(1, 60), body=rng.choice(spec.bodies))
            items[rec["id"]] = rec
        return {"items": items, "sort": rng.choice(SORTS)}
    return make_world


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"items": records.overlay(), "folders": {}, "sort": world["sort"], "playing": ""}


def all_items(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    return records.merged(world["items"], data["items"])


def get_item(world: dict[str, Any], data: dict[str, Any], iid: str) -> dict[str, Any] | None:
    return records.get(world["items"], data["items"], iid)


def live_items(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The items not in the bin, by title."""
    return sorted((r for r in all_items(world, data) if not r["trashed"]), key=lambda r: (r["title"], r["id"]))


def view_fn(spec: FolderSpec):
    def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        """Judge view: items by id (overlay applied), every folder, the sort order, what is playing."""
        return {"items": {r["id"]: r for r in all_items(world, data)},
                "folders": {p: True for p in (*spec.folders, *data["folders"])}, "sort": data["sort"],
                "playing": data["playing"]}
    return view


def mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


# --- screens ---------------------------------------------------------------------------------------

class _Screens:
    """Screen builders and effects of one spec."""

    def __init__(self, spec: FolderSpec):
        self.spec = spec

    def folders(self, ctx: Ctx) -> list[str]:
        return [*self.spec.folders, *ctx.data["folders"]]

    def children(self, ctx: Ctx, path: str) -> list[str]:
        return [p for p in self.folders(ctx) if p.rpartition("/")[0] == path]

    def item_row(self, rec: dict[str, Any], where: bool = False) -> Any:
        s = self.spec
        sub = f"{rec['size']} kB · {month_day_year(rec['date'])}"
        if where:
            sub = f"{folder_name(rec['folder'])} · {sub}"
        if rec["starred"]:
            sub += f" · {s.starred_word}"
        return item(rec["title"], sub, glyph="sound" if rec["media"] else "edit", rid=f"item_{rec['id']}",
                    on_tap=tap("open_item", iid=rec["id"]), long_tap=tap("item_menu", iid=rec["id"]))

    def folder_row(self, ctx: Ctx, path: str, live: list[dict[str, Any]]) -> Any:
        n = sum(r["folder"] == path for r in live)
        return item(folder_name(path), self.spec.amount(n), glyph="group", chevron=True,
                    on_tap=tap("open_folder", path=path), rid=f"folder_{path.replace('/', '_')}")

    def root(self, ctx: Ctx) -> Page:
        s, q = self.spec, ctx.field("q")
        live = live_items(ctx.world, ctx.data)
        rows = [search_bar("q", f"Search {s.plural}", q, ctx.focused("q"))]
        actions = []
        if q.strip():
            found = [r for r in live if q.casefold().strip() in r["title"].casefold()]
            rows.append(header(f"{len(found)} found" if found else f"No {s.plural} match"))
            rows += [self.item_row(r, where=True) for r in found]
        else:
            rows.append(header(f"{s.folder_word}s"))
            rows += [self.folder_row(ctx, p, live) for p in self.children(ctx, "")]
            binned = sum(r["trashed"] for r in all_items(ctx.world, ctx.data))
            if s.bin_place == "row":
                rows.append(item(s.bin_word, s.amount(binned), glyph="delete", on_tap=tap("open_bin"), rid="bin"))
        if s.bin_place == "icon":
            actions.append(icon_button("delete", s.bin_word, tap("open_bin")))
        return Page(s.label, rows, up=False, actions=actions,
                    fab=fab("plus", f"New {s.folder_word.lower()}", tap("open_new_folder")))

    def folder(self, ctx: Ctx) -> Page:
        s, path = self.spec, ctx.params["path"]
        live = live_items(ctx.world, ctx.data)
        here = [r for r in live if r["folder"] == path]
        sort = ctx.data["sort"]
        if sort != "name":
            here.sort(key=lambda r: r[sort], reverse=True)  # largest, newest first
        rows = []
        if s.nav == "crumbs":
            parts = path.split("/")
            rows.append(tabs([(s.label, tap("crumb", up=len(parts)), False)]
                             + [(part, tap("crumb", up=len(parts) - 1 - i), i == len(parts) - 1)
                                for i, part in enumerate(parts)]))
        rows.append(header(f"{s.amount(len(here))} · by {s.sort_label(sort).lower()}"))
        rows += [self.folder_row(ctx, p, live) for p in self.children(ctx, path)]
        rows += [self.item_row(r) for r in here]
        if not here:
            rows.append(paragraph(f"No {s.plural} in here yet."))
        return Page(folder_name(path), rows, up=s.nav == "up", actions=[icon_button("sort", "Sort", tap("ask_sort"))],
                    fab=fab("plus", f"New {s.noun}", tap("open_new_item", folder=path)))

    def item(self, ctx: Ctx) -> Page:
        s = self.spec
        rec = get_item(ctx.world, ctx.data, ctx.params["iid"])
        if rec is None or rec["trashed"]:
            return Page(s.noun.capitalize(), [paragraph(f"This {s.noun} is in the {s.bin_word.lower()}.")])
        iid = rec["id"]
        rows = []
        if s.detail == "bar":
            rows.append(action_bar([("Rename", "edit", tap("open_rename", iid=iid)),
                                    ("Move", "share", tap("ask_dest", iid=iid)),
                                    ("Delete", "delete", tap("ask_delete", iid=iid))]))
        rows += [info("Kind", s.media_kind if rec["media"] else s.text_kind, rid="kind"),
                 info("Size", f"{rec['size']} kB", rid="size"),
                 info(s.date_label, month_day_year(rec["date"]), rid="date"),
                 info(s.folder_word, folder_name(rec["folder"]), rid="folder")]
        if rec["media"]:
            playing = ctx.data["playing"] == iid
            rows += [info("Length", mmss(rec["seconds"]), rid="length"),
                     info("Status", "Playing" if playing else "Stopped", rid="status"),
                     info("Plays", str(rec["plays"]), rid="plays"),
                     button("Stop" if playing else "Play", tap("stop" if playing else "play", iid=iid))]
        else:
            rows.append(paragraph(rec["body"]))
        return Page(rec["title"], rows)

    def bin(self, ctx: Ctx) -> Page:
        s = self.spec
        gone = [r for r in all_items(ctx.world, ctx.data) if r["trashed"]]
        rows = [header(f"{s.amount(len(gone))} in the {s.bin_word.lower()}" if gone else "Nothing to restore")]
        rows += [item(r["title"], f"from {folder_name(r['folder'])}", glyph="delete", rid=f"binned_{r['id']}",
                      on_tap=tap("bin_menu", iid=r["id"])) for r in gone]
        if gone:
            rows.append(button(f"Empty {s.bin_word.lower()}", tap("ask_empty"), primary=False))
        return Page(s.bin_word, rows)

    def new_item(self, ctx: Ctx) -> Page:
        s = self.spec
        return Page(f"New {s.noun}", [field_row("title", s.title_label, ctx.field("title"), ctx.focused("title")),
                                      field_row("body", s.body_label, ctx.field("body"), ctx.focused("body")),
                                      button("Save", tap("save_item"))])

    def new_folder(self, ctx: Ctx) -> Page:
        s = self.spec
        return Page(f"New {s.folder_word.lower()}", [
            field_row("name", f"{s.folder_word} name", ctx.field("name"), ctx.focused("name")),
            button("Create", tap("make_folder"))])

    def rename(self, ctx: Ctx) -> Page:
        return Page(f"Rename {self.spec.noun}", [
            field_row("title", self.spec.title_label, ctx.field("title"), ctx.focused("title")),
            button("Save", tap("save_title"))])

    # --- effects ---------------------------------------------------------------------------------

    def edit(self, ctx: Ctx, iid: str, toast: str, **changes: Any) -> None:
        records.edited(ctx.world["items"], ctx.data["items"], iid, **changes)
        ctx.toast(toast)

    def crumb(self, ctx: Ctx, p: dict[str, Any]) -> None:
        for _ in range(p["up"]):
            ctx.back()

    def item_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, rec = self.spec, get_item(ctx.world, ctx.data, p["iid"])
        star = f"Un{s.star_word.lower()}" if rec["starred"] else s.star_word
        ctx.dialog(rec["title"], options=[(label, tap(trigger, iid=rec["id"]), False) for label, trigger in (
            ("Rename", "open_rename"), ("Move to…", "ask_dest"), (star, "star"), ("Delete", "ask_delete"))])

    def star(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["iid"])
        word = f"{self.spec.star_word}: removed" if rec["starred"] else self.spec.starred_word
        self.edit(ctx, rec["id"], f"{word} · {rec['title']}", starred=not rec["starred"])

    def ask_dest(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["iid"])
        ctx.dialog(f"Move to which {self.spec.folder_word.lower()}?",
                   options=[(folder_name(d), tap("move", iid=rec["id"], dest=d), False)
                            for d in self.folders(ctx) if d != rec["folder"]],
                   buttons=[("Cancel", tap("dismiss"))])

    def move(self, ctx: Ctx, p: dict[str, Any]) -> None:
        self.edit(ctx, p["iid"], f"Now in {folder_name(p['dest'])}", folder=p["dest"])

    def ask_delete(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, rec = self.spec, get_item(ctx.world, ctx.data, p["iid"])
        ctx.dialog(f"Put “{rec['title']}” in the {s.bin_word.lower()}?", f"It stays there until the "
                   f"{s.bin_word.lower()} is emptied.", buttons=[("Cancel", tap("dismiss")),
                                                                 ("Delete", tap("to_bin", iid=rec["id"]))])

    def to_bin(self, ctx: Ctx, p: dict[str, Any]) -> None:
        if ctx.data["playing"] == p["iid"]:
            ctx.data["playing"] = ""
        self.edit(ctx, p["iid"], f"Sent to the {self.spec.bin_word.lower()}", trashed=True)

    def ask_sort(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.dialog("Order by", options=[(self.spec.sort_label(k), tap("set_sort", key=k), k == ctx.data["sort"])
                                        for k in SORTS], buttons=[("Cancel", tap("dismiss"))])

    def set_sort(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.data["sort"] = p["key"]
        ctx.page["scroll"] = 0
        ctx.toast(f"Ordered by {self.spec.sort_label(p['key']).lower()}")

    def play(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["iid"])
        ctx.data["playing"] = rec["id"]
        self.edit(ctx, rec["id"], f"Playing {rec['title']}", plays=rec["plays"] + 1)

    def stop(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.data["playing"] = ""
        ctx.toast("Playback stopped")

    def bin_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["iid"])
        ctx.dialog(rec["title"], options=[("Restore", tap("restore", iid=rec["id"]), False),
                                          ("Erase for good", tap("erase", iid=rec["id"]), False)])

    def restore(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["iid"])
        self.edit(ctx, rec["id"], f"Back in {folder_name(rec['folder'])}", trashed=False)

    def erase(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.delete(ctx.data["items"], p["iid"])
        ctx.toast("Erased")

    def ask_empty(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s = self.spec
        ctx.dialog(f"Empty the {s.bin_word.lower()}?", f"Every {s.noun} in it is erased for good.",
                   buttons=[("Cancel", tap("dismiss")), ("Empty", tap("empty_bin"))])

    def empty_bin(self, ctx: Ctx, p: dict[str, Any]) -> None:
        for rec in all_items(ctx.world, ctx.data):
            if rec["trashed"]:
                records.delete(ctx.data["items"], rec["id"])
        ctx.toast(f"The {self.spec.bin_word.lower()} is empty")

    def open_rename(self, ctx: Ctx) -> None:
        ctx.set_field("title", get_item(ctx.world, ctx.data, ctx.params["iid"])["title"])

    def guard_title(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        return None if ctx.field("title").strip() else f"a {self.spec.noun} needs a {self.spec.title_label.lower()}"

    def save_title(self, ctx: Ctx, p: dict[str, Any]) -> None:
        self.edit(ctx, ctx.params["iid"], "Renamed", title=ctx.field("title").strip())

    def save_item(self, ctx: Ctx, p: dict[str, Any]) -> None:
        body = ctx.field("body").strip()
        records.put(ctx.data["items"], {
            "id": records.new_id(ctx.data["items"]), "title": ctx.field("title").strip(), "body": body,
            "folder": ctx.params["folder"], "date": DATES[-1], "size": max(1, len(body.encode()) // 1000),
            "starred": False, "trashed": False, "media": False})
        ctx.toast(f"Saved in {folder_name(ctx.params['folder'])}")

    def guard_folder(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        name = ctx.field("name").strip()
        if not name or "/" in name:
            return f"enter a {self.spec.folder_word.lower()} name"
        return "that name is taken" if name in map(folder_name, self.folders(ctx)) else None

    def make_folder(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.data["folders"][ctx.field("name").strip()] = True
        ctx.toast(f"{self.spec.folder_word} created")


def build_folder_app(spec: FolderSpec) -> App:
    """The App of one folders spec (its templates are attached by the pretraining registry)."""
    s = _Screens(spec)
    lists, pages = ("root", "folder"), ("root", "folder", "item")
    screens = [Screen("root", s.root, doc=spec.label),
               Screen("folder", s.folder, params=("path",), doc=spec.folder_word),
               Screen("item", s.item, params=("iid",), doc=spec.noun.capitalize()),
               Screen("bin", s.bin, doc=spec.bin_word),
               Screen("new_item", s.new_item, params=("folder",), doc=f"New {spec.noun}"),
               Screen("new_folder", s.new_folder, doc=f"New {spec.folder_word.lower()}"),
               Screen("rename", s.rename, params=("iid",), doc="Rename", on_open=s.open_rename)]
    transitions = [
        Transition("open_folder", lists, "folder"),
        Transition("open_item", lists, "item"),
        Transition("crumb", ("folder",), None, s.crumb),
        Transition("item_menu", lists, None, s.item_menu),
        Transition("star", lists, None, s.star),
        Transition("open_rename", pages, "rename"),
        Transition("save_title", ("rename",), BACK, s.save_title, s.guard_title),
        Transition("ask_dest", pages, None, s.ask_dest),
        Transition("move", pages, None, s.move),
        Transition("ask_delete", pages, None, s.ask_delete),
        Transition("to_bin", pages, None, s.to_bin),
        Transition("ask_sort", ("folder",), None, s.ask_sort),
        Transition("set_sort", ("folder",), None, s.set_sort),
        Transition("play", ("item",), None, s.play),
        Transition("stop", ("item",), None, s.stop),
        Transition("open_bin", ("root",), "bin"),
        Transition("bin_menu", ("bin",), None, s.bin_menu),
        Transition("restore", ("bin",), None, s.restore),
        Transition("erase", ("bin",), None, s.erase),
        Transition("ask_empty", ("bin",), None, s.ask_empty),
        Transition("empty_bin", ("bin",), None, s.empty_bin),
        Transition("open_new_item", ("folder",), "new_item"),
        Transition("save_item", ("new_item",), BACK, s.save_item, s.guard_title),
        Transition("open_new_folder", ("root",), "new_folder"),
        Transition("make_folder", ("new_folder",), BACK, s.make_folder, s.guard_folder),
        Transition("dismiss", ("*",), None, None),
    ]
    return App(name=spec.name, label=spec.label, package=spec.package, color=spec.color, glyph=spec.glyph,
               home="root", screens={x.id: x for x in screens}, transitions={t.id: t for t in transitions},
               make_world=make_world_fn(spec), initial_data=initial_data, view=view_fn(spec), entity_params=("iid",))
