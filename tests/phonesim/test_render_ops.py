"""Draw ops: distinct types never compare equal (they key the render caches as tuples), and
building a screen's ops goes through the per-widget table."""

from __future__ import annotations

import typing
from itertools import combinations

from phonesim import Phone, instantiate, load_apps, solve
from phonesim.actions import Action
from phonesim.render import build, ops
from phonesim.render.theme import LIGHT, under_scrim

OP_TYPES = typing.get_args(ops.DrawOp)


def _kinds(op_type: type) -> list[str]:
    """Per field: "text" for str-only fields, "number" otherwise (colours may be None)."""
    hints = typing.get_type_hints(op_type)
    return ["text" if hints[name] is str else "number" if hints[name] in (int, float, bool) else "other"
            for name in op_type._fields]


def test_no_two_op_types_can_compare_equal():
    for a, b in combinations(OP_TYPES, 2):
        if len(a._fields) != len(b._fields):
            continue
        clash = any({x, y} == {"text", "number"} for x, y in zip(_kinds(a), _kinds(b)))
        assert clash, f"{a.__name__} and {b.__name__} could hold equal tuples"


def test_recoloured_changes_only_the_colours_an_op_sets():
    rect = ops.Rect(0, 0, 10, 10, "#ffffff", 4, None, 2)
    dimmed = ops.recoloured(rect, under_scrim)
    assert dimmed == ops.Rect(0, 0, 10, 10, under_scrim("#ffffff"), 4, None, 2)
    text = ops.Text(1, 2, "Hi", 12, False, "#000000", "la")
    assert ops.recoloured(text, str.upper).colour == "#000000".upper()


CONTAINERS = {"actionrow", "body", "buttonrow", "clearscrim", "searchrow", "tabrow"}  # draw nothing themselves


def test_every_widget_kind_met_on_a_walk_has_a_drawer_or_is_a_container():
    kinds = set()
    for app in load_apps():
        phone = Phone()
        phone.launch(app)
        for _ in range(12):
            kinds |= {node.kind for root in phone.frame().nodes for node in root.walk()}
            phone.step(Action("click", element=len(phone.observe().elements) // 2))
    assert kinds - set(build._WIDGETS) <= CONTAINERS
    assert {"statusbar", "navbar", "item", "title", "fab"} <= kinds


def test_a_dialog_scrim_dims_what_lies_under_it_and_is_not_kept():
    task = instantiate("settings.set_screen_timeout", 0)
    phone = task.make_phone()
    for action in solve(phone, task)[:-1]:  # the last step closes the timeout dialog
        phone.step(action)
    dialog = build.frame_ops(phone.frame(), LIGHT)
    assert any(node.kind == "scrim" for root in phone.frame().nodes for node in root.walk())
    assert not any(isinstance(op, ops.Scrim) for op in dialog)
    assert dialog[0].fill == under_scrim(LIGHT["bg"]) != LIGHT["bg"]  # the page background, dimmed
