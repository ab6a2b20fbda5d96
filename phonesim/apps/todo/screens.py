"""Tasks screens: lists / today / done tabs with search, a list's tasks, task detail (toggle
done, priority picker, delete), edit and create forms."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.todo.world import LISTS, PRIORITIES, all_tasks, get_task
from phonesim.context import Ctx
from phonesim.dates import TODAY, counted, long_date, read_date, short_date
from phonesim.widgets import (
    Page, action_bar, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tabs, tap,
)

TAB_LABELS = (("lists", "Lists"), ("today", "Today"), ("done", "Done"))


def due_text(t: dict[str, Any]) -> str:
    if not t["due"]:
        return "No due date"
    if t["due"] < TODAY.isoformat() and not t["done"]:
        return f"Overdue · {short_date(t['due'])}"
    return f"Due {short_date(t['due'])}"


def task_row(t: dict[str, Any]) -> Any:
    sub = due_text(t) + ("" if t["priority"] == "None" else f" · {t['priority']} priority")
    return item(t["title"], sub, on_tap=tap("open_task", tid=t["id"]), long_tap=tap("task_menu", tid=t["id"]),
                glyph="check" if t["done"] else "star", rid=f"task_{t['id']}")


def build_home(ctx: Ctx) -> Page:
    q, tab = ctx.field("q"), ctx.ui("tab", "lists")
    tasks = all_tasks(ctx.world, ctx.data)
    rows = [search_bar("q", "Search tasks", q, ctx.focused("q"))]
    if q.strip():
        hits = [t for t in tasks if q.casefold().strip() in t["title"].casefold()]
        rows.append(header(counted(len(hits), "result") if hits else "No matching tasks"))
        rows += [task_row(t) for t in hits]
    else:
        rows.append(tabs([(label, tap("set_tab", tab=key), tab == key) for key, label in TAB_LABELS]))
        if tab == "lists":
            for lst in LISTS:
                mine = [t for t in tasks if t["list"] == lst]
                n_open = sum(not t["done"] for t in mine)
                rows.append(item(lst, f"{n_open} open · {len(mine) - n_open} done",
                                 on_tap=tap("open_list", lst=lst), glyph="menu", chevron=True,
                                 rid=f"list_{lst.lower().replace(' ', '_')}"))
        elif tab == "today":
            due = [t for t in tasks if t["due"] == TODAY.isoformat() and not t["done"]]
            rows.append(header(f"{len(due)} due today"))
            rows += [task_row(t) for t in due]
        else:
            done = [t for t in tasks if t["done"]]
            rows.append(header(f"{len(done)} completed"))
            rows += [task_row(t) for t in done]
    return Page("Tasks", rows, up=False, fab=fab("plus", "New task", tap("open_create", into="My Tasks")))


def build_list(ctx: Ctx) -> Page:
    lst = ctx.params["lst"]
    mine = [t for t in all_tasks(ctx.world, ctx.data) if t["list"] == lst]
    todo = sorted((t for t in mine if not t["done"]), key=lambda t: (t["due"] or "9999", t["title"]))
    done = [t for t in mine if t["done"]]
    rows = [header(f"{counted(len(todo), 'open task')}")] + [task_row(t) for t in todo]
    rows += [header(f"Completed ({len(done)})")] + [task_row(t) for t in done]
    return Page(lst, rows, fab=fab("plus", "New task", tap("open_create", into=lst)))


def build_task(ctx: Ctx) -> Page:
    t = get_task(ctx.world, ctx.data, ctx.params["tid"])
    if t is None:
        return Page("Task", [paragraph("This task was deleted.")])
    tid = t["id"]
    rows = [
        action_bar([("Mark not done" if t["done"] else "Mark done", "check", tap("toggle_done", tid=tid)),
                    ("Edit", "edit", tap("open_edit", tid=tid)), ("Delete", "delete", tap("ask_delete", tid=tid))]),
        info("Status", "Completed" if t["done"] else "Open", rid="status"),
        info("List", t["list"], rid="list"),
        info("Due date", long_date(t["due"]) if t["due"] else "No due date", rid="due"),
        info("Priority", t["priority"], on_tap=tap("ask_priority", tid=tid), rid="priority"),
    ]
    if t["notes"]:
        rows.append(info("Notes", t["notes"], rid="notes"))
    return Page(t["title"], rows)


def _form(ctx: Ctx, title: str) -> Page:
    rows = [field_row("title", "Title", ctx.field("title"), ctx.focused("title")),
            field_row("due", "Due date", ctx.field("due"), ctx.focused("due"), hint="YYYY-MM-DD"),
            field_row("notes", "Notes", ctx.field("notes"), ctx.focused("notes")),
            item("Priority", ctx.ui("priority", "None"), on_tap=tap("ask_form_priority"), chevron=True,
                 rid="priority_picker"),
            item("List", ctx.ui("list", "My Tasks"), on_tap=tap("ask_list"), chevron=True, rid="list_picker"),
            button("Save", tap("save"))]
    return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])


def build_edit(ctx: Ctx) -> Page:
    return _form(ctx, "Edit task")


def build_create(ctx: Ctx) -> Page:
    return _form(ctx, "New task")


def open_edit(ctx: Ctx) -> None:
    t = get_task(ctx.world, ctx.data, ctx.params["tid"])
    for key in ("title", "due", "notes"):
        ctx.set_field(key, t[key])
    ctx.set_ui("priority", t["priority"])
    ctx.set_ui("list", t["list"])


def open_create(ctx: Ctx) -> None:
    ctx.set_ui("list", ctx.params["into"])


# --- effects ----------------------------------------------------------------------------------

set_tab = effects.set_ui_from_tap("tab", rescroll=True)


def toggle_done(ctx: Ctx, p: dict[str, Any]) -> None:
    t = get_task(ctx.world, ctx.data, p["tid"])
    records.edited(ctx.world["tasks"], ctx.data, t["id"], done=not t["done"])
    ctx.toast("Marked not done" if t["done"] else "Task completed")


def task_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    t = get_task(ctx.world, ctx.data, p["tid"])
    toggle = "Mark not done" if t["done"] else "Mark done"
    ctx.dialog(t["title"], options=[(toggle, tap("toggle_done", tid=t["id"]), False),
                                    ("Delete", tap("ask_delete", tid=t["id"]), False)])


ask_delete = effects.ask_delete(get_task, "tid", "Delete this task?", lambda t: f"“{t['title']}” will be deleted.",
                                detail="task")


delete = effects.delete("tid", "Task deleted")


def ask_priority(ctx: Ctx, p: dict[str, Any]) -> None:
    t = get_task(ctx.world, ctx.data, p["tid"])
    ctx.dialog("Priority", options=[(pr, tap("set_priority", tid=t["id"], priority=pr), pr == t["priority"])
                                    for pr in PRIORITIES], buttons=[("Cancel", tap("dismiss"))])


def set_priority(ctx: Ctx, p: dict[str, Any]) -> None:
    records.edited(ctx.world["tasks"], ctx.data, p["tid"], priority=p["priority"])


ask_form_priority = effects.choice_dialog("Priority", "priority", PRIORITIES, "choose_priority", default="None")


choose_priority = effects.set_ui_from_tap("priority")


ask_list = effects.choice_dialog("Move to list", "list", LISTS, "choose_list", default="My Tasks", param="lst")


choose_list = effects.set_ui_from_tap("list", "lst")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    if not ctx.field("title").strip():
        return "a task needs a title"
    if ctx.field("due").strip() and read_date(ctx.field("due")) is None:
        return "due date not understood (use YYYY-MM-DD)"
    return None


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    values = {"title": ctx.field("title").strip(), "notes": ctx.field("notes").strip(),
              "due": read_date(ctx.field("due")) if ctx.field("due").strip() else "",
              "priority": ctx.ui("priority", "None"), "list": ctx.ui("list", "My Tasks")}
    if ctx.page["screen"] == "edit":
        records.edited(ctx.world["tasks"], ctx.data, ctx.params["tid"], **values)
    else:
        records.put(ctx.data, {"id": records.new_id(ctx.data), "done": False, **values})
    ctx.toast("Task saved")


SCREENS = {s.id: s for s in [
    Screen("home", build_home, doc="Tasks"),
    Screen("list", build_list, params=("lst",), doc="Task list"),
    Screen("task", build_task, params=("tid",), doc="Task details"),
    Screen("edit", build_edit, params=("tid",), doc="Edit task", on_open=open_edit),
    Screen("create", build_create, params=("into",), doc="New task", on_open=open_create),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("set_tab", ("home",), None, set_tab),
    Transition("open_list", ("home",), "list"),
    Transition("open_task", ("home", "list"), "task"),
    Transition("open_edit", ("task",), "edit"),
    Transition("open_create", ("home", "list"), "create"),
    Transition("toggle_done", ("home", "list", "task"), None, toggle_done),
    Transition("task_menu", ("home", "list"), None, task_menu),
    *effects.delete_transitions(("home", "list"), "task", ask_delete, delete),
    Transition("ask_priority", ("task",), None, ask_priority),
    Transition("set_priority", ("task",), None, set_priority),
    Transition("ask_form_priority", ("edit", "create"), None, ask_form_priority),
    Transition("choose_priority", ("edit", "create"), None, choose_priority),
    Transition("ask_list", ("edit", "create"), None, ask_list),
    Transition("choose_list", ("edit", "create"), None, choose_list),
    Transition("save", ("edit", "create"), BACK, save, guard_save),
    Transition("dismiss", ("*",), None, None),
]}
