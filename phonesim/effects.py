"""Transition effects that many apps share (apps/README.md §3), built per app from a few
arguments: set-and-scroll-to-top, choice dialogs, delete confirmation and record edits over
the `phonesim.records` overlay. Each factory returns an `effect(ctx, params)`;
`delete_transitions` declares the usual confirm-then-delete transitions."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from phonesim import records
from phonesim.app import BACK, Transition
from phonesim.context import Ctx
from phonesim.widgets import tap

Effect = Callable[[Ctx, dict[str, Any]], None]
Getter = Callable[[dict[str, Any], dict[str, Any], str], dict[str, Any] | None]


def set_ui_from_tap(key: str, param: str | None = None, rescroll: bool = False) -> Effect:
    """Store tap parameter `param` (default: `key`) as page UI state `key` (a picked tab, sort or
    category); `rescroll` scrolls the page back to the top, as a new tab or sort order does."""
    param = param or key

    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.set_ui(key, p[param])
        if rescroll:
            ctx.page["scroll"] = 0
    return effect


def choice_dialog(title: str, key: str, options: Iterable[str], trigger: str, default: Any = None,
                  param: str | None = None, label: Callable[[str], str] = str) -> Effect:
    """A single-choice dialog over `options` (shown as `label(option)`); the one equal to page UI
    state `key` (or `default`) is checked; picking one fires `trigger` with `{param: option}`."""
    options, param = tuple(options), param or key

    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        current = ctx.ui(key, default)
        ctx.dialog(title, options=[(label(o), tap(trigger, **{param: o}), o == current) for o in options],
                   buttons=[("Cancel", tap("dismiss"))])
    return effect


def delete_menu(param: str) -> Effect:
    """Overflow menu of a detail page holding one item: Delete (asks first)."""
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.menu([("Delete", tap("ask_delete", **{param: p[param]}))])
    return effect


def ask_delete(get: Getter, param: str, title: str, message: Callable[[dict[str, Any]], str],
               detail: str | None = None) -> Effect:
    """Confirm deleting record `params[param]`. Confirming fires `delete`, or `delete_open` when
    shown on the record's own `detail` screen (that transition also navigates back)."""
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get(ctx.world, ctx.data, p[param])
        trigger = "delete_open" if ctx.page["screen"] == detail else "delete"
        ctx.dialog(title, message(rec), buttons=[("Cancel", tap("dismiss")),
                                                 ("Delete", tap(trigger, **{param: rec["id"]}))])
    return effect


def delete_transitions(lists: tuple[str, ...], detail: str, ask: Effect, delete: Effect) -> list[Transition]:
    """The confirm-then-delete graph: `ask_delete` from the `lists` and the `detail` screen,
    `delete` (stay on the list) and `delete_open` (leave the deleted item's own page)."""
    return [Transition("ask_delete", lists + (detail,), None, ask),
            Transition("delete", lists, None, delete),
            Transition("delete_open", (detail,), BACK, delete)]


def delete(param: str, toast: str, overlay: Callable[[Ctx], dict[str, Any]] = lambda ctx: ctx.data) -> Effect:
    """Delete record `params[param]` from the app's overlay and say so."""
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        records.delete(overlay(ctx), p[param])
        ctx.toast(toast)
    return effect


def record_dialog(get: Getter, param: str, options: Iterable[tuple[str, str]]) -> Effect:
    """Long-press dialog titled with the record's name: one option per `(label, trigger)`, each
    firing its trigger with `{param: id}`."""
    options = tuple(options)

    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get(ctx.world, ctx.data, p[param])
        ctx.dialog(rec["name"], options=[(label, tap(trigger, **{param: rec["id"]}), False)
                                         for label, trigger in options])
    return effect


def edit_record(collection: str, param: str, toast: str, **changes: Any) -> Effect:
    """Set fixed `changes` on record `params[param]` of world collection `collection`, then toast."""
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        records.edited(ctx.world[collection], ctx.data, p[param], **changes)
        ctx.toast(toast)
    return effect
