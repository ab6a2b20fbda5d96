"""Messages screens: inbox with search, conversation (compose box on top, newest message first),
new conversation (contact picker). Long-press or the app-bar bin deletes a conversation."""

from __future__ import annotations

from typing import Any

from phonesim import effects
from phonesim.app import Screen, Transition
from phonesim.apps.sms.world import conversations, messages, now
from phonesim.context import Ctx
from phonesim.dates import counted, short_date
from phonesim.widgets import Page, button, fab, field_row, header, icon_button, item, search_bar, tap


def name_of(ctx: Ctx, cid: str) -> str:
    return ctx.world["people"][cid]["name"]


def stamp(at: str) -> str:
    return f"{short_date(at[:10])}, {at[11:]}"


def thread_row(ctx: Ctx, cid: str) -> Any:
    last = messages(ctx.world, ctx.data, cid)[-1]
    name = name_of(ctx, cid)
    return item(name, ("You: " if last["from"] == "me" else "") + last["text"], on_tap=tap("open_thread", cid=cid),
                long_tap=tap("ask_delete", cid=cid), avatar=name, trailing=short_date(last["at"][:10]),
                rid=f"thread_{cid}")


def build_inbox(ctx: Ctx) -> Page:
    q = ctx.field("q")
    cids = conversations(ctx.world, ctx.data)
    rows = [search_bar("q", "Search messages", q, ctx.focused("q"))]
    if q.strip():
        needle = q.casefold().strip()
        cids = [cid for cid in cids if needle in name_of(ctx, cid).casefold()
                or any(needle in m["text"].casefold() for m in messages(ctx.world, ctx.data, cid))]
        rows.append(header(counted(len(cids), "conversation") if cids else "No results"))
    rows += [thread_row(ctx, cid) for cid in cids]
    return Page("Messages", rows, up=False, fab=fab("plus", "Start chat", tap("open_new")))


def build_thread(ctx: Ctx) -> Page:
    cid = ctx.params["cid"]
    msgs = messages(ctx.world, ctx.data, cid)
    first = name_of(ctx, cid).split()[0]
    rows = [field_row("msg", "Text message", ctx.field("msg"), ctx.focused("msg"), hint="Type a message"),
            button("Send", tap("send", cid=cid), enabled=bool(ctx.field("msg").strip())),
            header(counted(len(msgs), "message"))]
    rows += [item(m["text"], f"{'You' if m['from'] == 'me' else first} · {stamp(m['at'])}",
                  glyph="person" if m["from"] == "them" else "message", rid=f"msg_{i}")
             for i, m in reversed(list(enumerate(msgs)))]
    actions = [icon_button("delete", "Delete conversation", tap("ask_delete", cid=cid))] if msgs else []
    return Page(name_of(ctx, cid), rows, actions=actions)


def build_new(ctx: Ctx) -> Page:
    q = ctx.field("to")
    people = sorted(ctx.world["people"].items(), key=lambda kv: kv[1]["name"])
    rows = [field_row("to", "To", q, ctx.focused("to"), hint="Type a name or number")]
    if q.strip():
        needle = q.casefold().strip()
        people = [(cid, p) for cid, p in people if needle in p["name"].casefold() or needle in p["phone"]]
    rows.append(header("Contacts" if people else "No matching contacts"))
    rows += [item(p["name"], p["phone"], on_tap=tap("open_thread", cid=cid), avatar=p["name"], rid=f"to_{cid}")
             for cid, p in people]
    return Page("New conversation", rows)


# --- effects ----------------------------------------------------------------------------------

def send(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["sent"].setdefault(p["cid"], []).append({"from": "me", "text": ctx.field("msg").strip(),
                                                     "at": now(ctx.system)})
    ctx.set_field("msg", "")
    ctx.page["focus"] = None
    ctx.toast("Message sent")


def ask_delete(ctx: Ctx, p: dict[str, Any]) -> None:
    on_thread = ctx.page["screen"] == "thread"
    ctx.dialog("Delete this conversation?", f"All messages with {name_of(ctx, p['cid'])} will be deleted.",
               buttons=[("Cancel", tap("dismiss")),
                        ("Delete", tap("delete_open" if on_thread else "delete", cid=p["cid"]))])


def delete(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["sent"].pop(p["cid"], None)
    if p["cid"] in ctx.world["threads"]:
        ctx.data["deleted"][p["cid"]] = True
    ctx.toast("Conversation deleted")


SCREENS = {s.id: s for s in [
    Screen("inbox", build_inbox, doc="Messages"),
    Screen("thread", build_thread, params=("cid",), doc="Conversation"),
    Screen("new", build_new, doc="New conversation"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_thread", ("inbox", "new"), "thread"),
    Transition("open_new", ("inbox",), "new"),
    Transition("send", ("thread",), None, send),
    *effects.delete_transitions(("inbox",), "thread", ask_delete, delete),
    Transition("dismiss", ("*",), None, None),
]}
