"""Contacts screens and navigation graph: list with search and tabs, detail, edit/create,
groups. Long-press on a list row opens a context dialog; deletion asks for confirmation."""

from __future__ import annotations

from datetime import date
from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.contacts.world import GROUPS, all_contacts, full_name, get_contact
from phonesim.context import Ctx
from phonesim.widgets import (
    Page, action_bar, button, fab, field_row, header, hero, icon_button, info, item, paragraph, search_bar, tabs, tap,
)

EDIT_FIELDS = (("first", "First name"), ("last", "Last name"), ("phone", "Phone"), ("email", "Email"),
               ("company", "Company"))


def pretty_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%B} {d.day}, {d.year}"


def _matches(c: dict[str, Any], q: str) -> bool:
    q = q.casefold().strip()
    digits = "".join(ch for ch in q if ch.isdigit())
    return q in full_name(c).casefold() or (len(digits) >= 3 and digits in "".join(ch for ch in c["phone"] if ch.isdigit()))


def build_list(ctx: Ctx) -> Page:
    q, tab = ctx.field("q"), ctx.ui("tab", "all")
    people = all_contacts(ctx.world, ctx.data)
    if tab == "fav":
        people = [c for c in people if c["favorite"]]
    if q.strip():
        people = [c for c in people if _matches(c, q)]
    rows = [search_bar("q", "Search contacts", q, ctx.focused("q")),
            tabs([("All", tap("set_tab", tab="all"), tab == "all"), ("Favourites", tap("set_tab", tab="fav"), tab == "fav")]),
            header(f"{len(people)} {'favourites' if tab == 'fav' else 'contacts'}" if people else "No contacts found")]
    letter = None
    for c in people:
        name = full_name(c)
        if not q and name[:1].upper() != letter:
            letter = name[:1].upper()
            rows.append(header(letter))
        rows.append(item(name, on_tap=tap("open_detail", cid=c["id"]), long_tap=tap("contact_menu", cid=c["id"]),
                         avatar=name, rid=f"contact_{c['id']}"))
    return Page("Contacts", rows, up=False,
                actions=[icon_button("more", "More options", tap("list_menu"))],
                fab=fab("plus", "Create contact", tap("open_create")))


def build_detail(ctx: Ctx) -> Page:
    c = get_contact(ctx.world, ctx.data, ctx.params["cid"])
    if c is None:
        return Page("Contact", [paragraph("This contact no longer exists.")])
    cid = c["id"]
    rows = [hero(full_name(c), c["company"], c["first"][:1] or c["last"][:1]),
            action_bar([("Call", "call", tap("call", cid=cid)), ("Edit", "edit", tap("open_edit", cid=cid))]),
            info("Phone", c["phone"] or "No phone number", glyph="phone", rid="phone")]
    if c["email"]:
        rows.append(info("Email", c["email"], glyph="mail", rid="email"))
    if c["company"]:
        rows.append(info("Company", c["company"], glyph="group", rid="company"))
    rows.append(info("Group", c["group"] or "None", glyph="contacts", rid="group"))
    if c.get("birthday"):
        rows.append(info("Birthday", pretty_date(c["birthday"]), glyph="star", rid="birthday"))
    if c.get("city"):
        rows.append(info("City", c["city"], glyph="location", rid="city"))
    star = icon_button("star_filled" if c["favorite"] else "star",
                       "Remove from favourites" if c["favorite"] else "Add to favourites",
                       tap("toggle_favorite", cid=cid), rid="favorite")
    return Page(full_name(c), rows, actions=[star, icon_button("more", "More options", tap("detail_menu", cid=cid))])


def _edit_rows(ctx: Ctx) -> list:
    rows = [field_row(fid, label, ctx.field(fid), ctx.focused(fid)) for fid, label in EDIT_FIELDS]
    rows.append(item("Group", ctx.ui("group") or "None", on_tap=tap("ask_group"), chevron=True, rid="group_picker"))
    rows.append(button("Save", tap("save")))
    return rows


def build_edit(ctx: Ctx) -> Page:
    return Page("Edit contact", _edit_rows(ctx), actions=[icon_button("check", "Save", tap("save"))])


def build_create(ctx: Ctx) -> Page:
    return Page("Create contact", _edit_rows(ctx), actions=[icon_button("check", "Save", tap("save"))])


def open_edit_page(ctx: Ctx) -> None:
    c = get_contact(ctx.world, ctx.data, ctx.params["cid"])
    for fid, _ in EDIT_FIELDS:
        ctx.set_field(fid, c[fid])
    ctx.set_ui("group", c["group"])


def build_groups(ctx: Ctx) -> Page:
    people = all_contacts(ctx.world, ctx.data)
    rows = []
    for g in GROUPS:
        n = sum(1 for c in people if c["group"] == g)
        rows.append(item(g, f"{n} contacts", on_tap=tap("open_group", group=g), glyph="group", rid=f"group_{g}"))
    return Page("Groups", rows)


def build_group(ctx: Ctx) -> Page:
    g = ctx.params["group"]
    members = [c for c in all_contacts(ctx.world, ctx.data) if c["group"] == g]
    rows = [header(f"{len(members)} contacts in {g}")]
    rows += [item(full_name(c), on_tap=tap("open_detail", cid=c["id"]), avatar=full_name(c), rid=f"contact_{c['id']}")
             for c in members]
    return Page(g, rows)


# --- effects ----------------------------------------------------------------------------------

def _edited(ctx: Ctx, cid: str) -> dict[str, Any]:
    return dict(get_contact(ctx.world, ctx.data, cid))


def toggle_favorite(ctx: Ctx, p: dict[str, Any]) -> None:
    c = _edited(ctx, p["cid"])
    c["favorite"] = not c["favorite"]
    records.put(ctx.data, c)
    ctx.toast("Added to favourites" if c["favorite"] else "Removed from favourites")


def call(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["calls"].append(p["cid"])
    ctx.toast(f"Calling {full_name(get_contact(ctx.world, ctx.data, p['cid']))}…")


def contact_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    c = get_contact(ctx.world, ctx.data, p["cid"])
    ctx.dialog(full_name(c), options=[
        ("Remove from favourites" if c["favorite"] else "Add to favourites", tap("toggle_favorite", cid=c["id"]), False),
        ("Delete", tap("ask_delete", cid=c["id"]), False)])


detail_menu = effects.delete_menu("cid")


def list_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.menu([("Groups", tap("open_groups"))])


ask_delete = effects.ask_delete(get_contact, "cid", "Delete this contact?",
                                lambda c: f"{full_name(c)} will be removed from your contacts.", detail="detail")


delete = effects.delete("cid", "Contact deleted")


ask_group = effects.choice_dialog("Group", "group", ("",) + GROUPS, "choose_group", default="",
                                   label=lambda g: g or "None")


choose_group = effects.set_ui_from_tap("group")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if (ctx.field("first").strip() or ctx.field("last").strip()) else "a contact needs a name"


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    values = {fid: ctx.field(fid).strip() for fid, _ in EDIT_FIELDS}
    if ctx.page["screen"] == "edit":
        record = _edited(ctx, ctx.params["cid"])
    else:
        record = {"id": records.new_id(ctx.data), "birthday": "", "city": "", "favorite": False}
    record.update(values, group=ctx.ui("group") or "")
    records.put(ctx.data, record)
    ctx.toast("Contact saved")


set_tab = effects.set_ui_from_tap("tab", rescroll=True)


SCREENS = {s.id: s for s in [
    Screen("list", build_list, doc="Contacts"),
    Screen("detail", build_detail, params=("cid",), doc="Contact details"),
    Screen("edit", build_edit, params=("cid",), doc="Edit contact", on_open=open_edit_page),
    Screen("create", build_create, doc="Create contact"),
    Screen("groups", build_groups, doc="Groups"),
    Screen("group", build_group, params=("group",), doc="Group members"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_detail", ("list", "group"), "detail"),
    Transition("open_edit", ("detail",), "edit"),
    Transition("open_create", ("list",), "create"),
    Transition("list_menu", ("list",), None, list_menu),
    Transition("open_groups", ("list",), "groups"),
    Transition("open_group", ("groups",), "group"),
    Transition("set_tab", ("list",), None, set_tab),
    Transition("contact_menu", ("list",), None, contact_menu),
    Transition("detail_menu", ("detail",), None, detail_menu),
    Transition("toggle_favorite", ("list", "detail"), None, toggle_favorite),
    Transition("call", ("detail",), None, call),
    *effects.delete_transitions(("list",), "detail", ask_delete, delete),
    Transition("ask_group", ("edit", "create"), None, ask_group),
    Transition("choose_group", ("edit", "create"), None, choose_group),
    Transition("save", ("edit", "create"), BACK, save, guard_save),
    Transition("dismiss", ("*",), None, None),
]}
