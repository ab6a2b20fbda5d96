"""Expenses screens and navigation graph (Pro Expense-like): dated list with search, category
filter and sort, detail, add/edit form with category and date pickers, totals per category."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.expenses.world import CATEGORIES, all_expenses, get_expense, money, totals
from phonesim.context import Ctx
from phonesim.dates import TODAY, month_day_year
from phonesim.widgets import Page, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tap

FORM_FIELDS = (("name", "Name"), ("amount", "Amount ($)"), ("note", "Note"))
PICKER_WEEKS = 9  # the date picker pages back one week at a time, about two months


def parse_amount(text: str) -> float | None:
    try:
        value = round(float(text.strip().lstrip("$").replace(",", "")), 2)
    except ValueError:
        return None
    return value if value > 0 else None


def _rows(expenses: list[dict[str, Any]], long_press: bool) -> list:
    return [item(e["name"], f"{e['category']} · {month_day_year(e['date'])}", trailing=money(e["amount"]),
                 avatar=e["category"], on_tap=tap("open_detail", eid=e["id"]),
                 long_tap=tap("expense_menu", eid=e["id"]) if long_press else None, rid=f"expense_{e['id']}")
            for e in expenses]


def build_list(ctx: Ctx) -> Page:
    q, cat, sort = ctx.field("q").strip().casefold(), ctx.ui("cat", ""), ctx.ui("sort", "date")
    shown = all_expenses(ctx.world, ctx.data)
    if cat:
        shown = [e for e in shown if e["category"] == cat]
    if q:
        shown = [e for e in shown if q in e["name"].casefold() or q in e["note"].casefold()]
    if sort == "amount":
        shown = sorted(shown, key=lambda e: (-e["amount"], e["id"]))
    total = money(sum(e["amount"] for e in shown))
    label = f"{cat}: " if cat else ""
    rows = [search_bar("q", "Search expenses", ctx.field("q"), ctx.focused("q")),
            header(f"{label}{len(shown)} expenses · {total}" if shown else "No expenses found")]
    rows += _rows(shown, long_press=True)
    return Page("Expenses", rows, up=False,
                actions=[icon_button("menu", "Filter by category", tap("ask_filter")),
                         icon_button("more", "More options", tap("list_menu"))],
                fab=fab("plus", "Add expense", tap("open_add")))


def build_detail(ctx: Ctx) -> Page:
    e = get_expense(ctx.world, ctx.data, ctx.params["eid"])
    if e is None:
        return Page("Expense", [paragraph("This expense no longer exists.")])
    eid = e["id"]
    return Page(e["name"], [
        info("Amount", money(e["amount"]), glyph="$", rid="amount"),
        info("Category", e["category"], glyph="menu", rid="category"),
        info("Date", month_day_year(e["date"]), glyph="▦", rid="date"),
        info("Note", e["note"] or "No note", glyph="edit", rid="note"),
    ], actions=[icon_button("edit", "Edit", tap("open_edit", eid=eid)),
                icon_button("more", "More options", tap("detail_menu", eid=eid))])


def _form(ctx: Ctx, title: str) -> Page:
    rows = [field_row(fid, label, ctx.field(fid), ctx.focused(fid)) for fid, label in FORM_FIELDS]
    rows.append(item("Category", ctx.ui("category") or "Choose a category", on_tap=tap("ask_category"),
                     chevron=True, glyph="menu", rid="category_picker"))
    rows.append(item("Date", month_day_year(ctx.ui("date")), on_tap=tap("ask_date", week=0), chevron=True, glyph="▦",
                     rid="date_picker"))
    rows.append(button("Save", tap("save")))
    return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])


def open_add(ctx: Ctx) -> None:
    ctx.set_ui("category", "")
    ctx.set_ui("date", TODAY.isoformat())


def open_edit(ctx: Ctx) -> None:
    e = get_expense(ctx.world, ctx.data, ctx.params["eid"])
    ctx.set_field("name", e["name"])
    ctx.set_field("amount", f"{e['amount']:.2f}")
    ctx.set_field("note", e["note"])
    ctx.set_ui("category", e["category"])
    ctx.set_ui("date", e["date"])


def build_totals(ctx: Ctx) -> Page:
    expenses = all_expenses(ctx.world, ctx.data)
    rows = [header(f"All categories: {money(sum(e['amount'] for e in expenses))}")]
    for cat, (n, total) in totals(expenses).items():
        rows.append(item(cat, f"{n} expenses", trailing=money(total), avatar=cat,
                         on_tap=tap("open_category", category=cat), rid=f"total_{cat}"))
    return Page("Totals by category", rows)


def build_category(ctx: Ctx) -> Page:
    cat = ctx.params["category"]
    shown = [e for e in all_expenses(ctx.world, ctx.data) if e["category"] == cat]
    return Page(cat, [header(f"{len(shown)} expenses · {money(sum(e['amount'] for e in shown))}"),
                      *_rows(shown, long_press=False)])


# --- effects ----------------------------------------------------------------------------------

ask_filter = effects.choice_dialog("Filter by category", "cat", ("",) + CATEGORIES, "set_filter", default="",
                                    param="category", label=lambda c: c or "All categories")


set_filter = effects.set_ui_from_tap("cat", "category", rescroll=True)


def list_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    other = "amount" if ctx.ui("sort", "date") == "date" else "date"
    ctx.menu([(f"Sort by {other}", tap("set_sort", sort=other)), ("Totals by category", tap("open_totals"))])


set_sort = effects.set_ui_from_tap("sort", rescroll=True)


detail_menu = effects.delete_menu("eid")


def expense_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    e = get_expense(ctx.world, ctx.data, p["eid"])
    ctx.dialog(e["name"], f"{money(e['amount'])} on {month_day_year(e['date'])}",
               options=[("Delete", tap("ask_delete", eid=e["id"]), False)], buttons=[("Cancel", tap("dismiss"))])


ask_delete = effects.ask_delete(get_expense, "eid", "Delete this expense?",
                                lambda e: f"{e['name']} ({money(e['amount'])}) will be removed.", detail="detail")


delete = effects.delete("eid", "Expense deleted")


ask_category = effects.choice_dialog("Category", "category", CATEGORIES, "pick_category")


pick_category = effects.set_ui_from_tap("category")


def ask_date(ctx: Ctx, p: dict[str, Any]) -> None:
    """One week of days per dialog page; "Earlier" shows the week before."""
    week, current = int(p["week"]), ctx.ui("date")
    days = [TODAY - timedelta(days=7 * week + i) for i in range(7)]
    labels = {0: "Today", 1: "Yesterday"}
    options = [(labels.get(7 * week + i, f"{d:%a}, {d:%b} {d.day}"), tap("pick_date", date=d.isoformat()),
                d.isoformat() == current) for i, d in enumerate(days)]
    buttons = [("Cancel", tap("dismiss"))]
    if week + 1 < PICKER_WEEKS:
        buttons.insert(0, ("Earlier", tap("ask_date", week=week + 1)))
    ctx.dialog("Date", options=options, buttons=buttons)


pick_date = effects.set_ui_from_tap("date")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    if not ctx.field("name").strip():
        return "an expense needs a name"
    if parse_amount(ctx.field("amount")) is None:
        return "the amount must be a positive number"
    if not ctx.ui("category"):
        return "choose a category"
    return None


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    if ctx.page["screen"] == "edit":
        record = dict(get_expense(ctx.world, ctx.data, ctx.params["eid"]))
    else:
        record = {"id": records.new_id(ctx.data)}
    record.update(name=ctx.field("name").strip(), amount=parse_amount(ctx.field("amount")),
                  note=ctx.field("note").strip(), category=ctx.ui("category"), date=ctx.ui("date"))
    records.put(ctx.data, record)
    ctx.toast("Expense saved")


SCREENS = {s.id: s for s in [
    Screen("list", build_list, doc="Expenses"),
    Screen("detail", build_detail, params=("eid",), doc="Expense"),
    Screen("add", lambda ctx: _form(ctx, "Add expense"), doc="Add expense", on_open=open_add),
    Screen("edit", lambda ctx: _form(ctx, "Edit expense"), params=("eid",), doc="Edit expense", on_open=open_edit),
    Screen("totals", build_totals, doc="Totals by category"),
    Screen("category", build_category, params=("category",), doc="Category"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_detail", ("list", "category"), "detail"),
    Transition("open_add", ("list",), "add"),
    Transition("open_edit", ("detail",), "edit"),
    Transition("list_menu", ("list",), None, list_menu),
    Transition("open_totals", ("list",), "totals"),
    Transition("open_category", ("totals",), "category"),
    Transition("ask_filter", ("list",), None, ask_filter),
    Transition("set_filter", ("list",), None, set_filter),
    Transition("set_sort", ("list",), None, set_sort),
    Transition("expense_menu", ("list",), None, expense_menu),
    Transition("detail_menu", ("detail",), None, detail_menu),
    *effects.delete_transitions(("list",), "detail", ask_delete, delete),
    Transition("ask_category", ("add", "edit"), None, ask_category),
    Transition("pick_category", ("add", "edit"), None, pick_category),
    Transition("ask_date", ("add", "edit"), None, ask_date),
    Transition("pick_date", ("add", "edit"), None, pick_date),
    Transition("save", ("add", "edit"), BACK, save, guard_save),
    Transition("dismiss", ("*",), None, None),
]}
