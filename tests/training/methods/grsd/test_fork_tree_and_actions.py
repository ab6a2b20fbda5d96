"""Tree state signatures and the action equivalence used by fork detection."""

from __future__ import annotations

import pytest

from training.methods.grsd.forks import ForkInputError, actions_equivalent
from training.methods.grsd.forks.actions import ActionContext, check_action
from training.methods.grsd.forks.tree import parse_elements, same_tree_state, tree_signature

STATUS = 68.0  # status-bar bottom of a 2400-pixel screen


def el(text="", cls="android.widget.TextView", rid="", bounds=(0, 100, 1080, 200), **flags):
    return {"class": cls, "text": text, "resource_id": rid, "bounds": list(bounds), **flags}


def sig(elements, **kw):
    return tree_signature(parse_elements(elements), STATUS)


def test_field_text_is_compared_exactly():
    base = [el("Title"), el("hello", cls="android.widget.EditText", rid="body", bounds=(0, 300, 1080, 400))]
    typo = [el("Title"), el("helo", cls="android.widget.EditText", rid="body", bounds=(0, 300, 1080, 400))]
    spaced = [el("Title"), el("hello ", cls="android.widget.EditText", rid="body", bounds=(0, 300, 1080, 400))]
    assert same_tree_state(sig(base), sig(base))
    assert not same_tree_state(sig(base), sig(typo))
    assert not same_tree_state(sig(base), sig(spaced))  # even whitespace, for fields
    # tolerance for static text never relaxes fields
    assert not same_tree_state(sig(base), sig(typo), max_static_differences=5)


def test_which_switch_is_on_matters():
    def switches(first, second):
        return [el("Wi-Fi", bounds=(0, 100, 800, 200)), el(cls="Switch", bounds=(800, 100, 1000, 200), checked=first),
                el("Bluetooth", bounds=(0, 200, 800, 300)), el(cls="Switch", bounds=(800, 200, 1000, 300), checked=second)]

    assert not same_tree_state(sig(switches(True, False)), sig(switches(False, True)))
    assert same_tree_state(sig(switches(True, False)), sig(switches(True, False)))


def test_status_bar_hidden_and_empty_elements_are_ignored():
    a = [el("12:00", bounds=(0, 0, 200, 60)), el("Inbox"), el("secret", visible=False), el("zero", bounds=(5, 300, 5, 400))]
    b = [el("17:45", bounds=(0, 0, 200, 60)), el("Inbox")]
    assert same_tree_state(sig(a), sig(b))


def test_static_text_tolerance():
    a = [el("Inbox"), el("2 min ago", bounds=(0, 300, 1080, 400))]
    b = [el("Inbox"), el("3 min ago", bounds=(0, 300, 1080, 400))]
    assert not same_tree_state(sig(a), sig(b))
    assert same_tree_state(sig(a), sig(b), max_static_differences=1)


def test_tree_formats_and_key_aliases():
    nested = {"class": "FrameLayout", "bounds": "[0,0][1080,2400]", "children": [
        {"className": "android.widget.EditText", "resource-id": "q", "text": "cats", "bounds": "[0,100][1080,200]",
         "focused": "true"},
        {"class": "Button", "content-desc": "Search", "bounds": {"left": 0, "top": 300, "right": 100, "bottom": 400}},
    ]}
    elements = parse_elements({"elements": [nested]})
    assert [e.cls for e in elements] == ["FrameLayout", "android.widget.EditText", "Button"]
    assert elements[1].editable and elements[1].focused and elements[1].resource_id == "q"
    assert elements[2].content_desc == "Search" and elements[2].bounds == (0, 300, 100, 400)


def test_malformed_tree_is_a_clear_error():
    with pytest.raises(ForkInputError, match=r"tree\[1\]: bounds"):
        parse_elements([el("ok"), {"class": "X", "bounds": [1, 2, 3]}])
    with pytest.raises(ForkInputError, match="checked must be a boolean"):
        parse_elements([{"class": "Switch", "checked": "maybe"}])


ROWS = parse_elements([el("Row 1", bounds=(0, 240, 1080, 480)), el("Row 2", bounds=(0, 480, 1080, 720))])
CTX = ActionContext(ROWS, (1080, 2400), bounds_in_grid=False)
NO_TREE = ActionContext(None, (1080, 2400), bounds_in_grid=False)


def same(a, b, ctx_a=CTX, ctx_b=CTX, tolerance=40.0):
    return actions_equivalent(check_action(a), check_action(b), ctx_a, ctx_b, tolerance)


def click(x, y=None, element=None):
    return {"type": "click", "args": {"element": element} if element is not None else {"point": [x, y]}}


def test_clicks_on_the_same_element_are_equivalent_even_far_apart():
    assert same(click(100, 110), click(900, 190))  # both inside Row 1 (pixels 240-480 of 2400)
    assert not same(click(100, 190), click(100, 210))  # Row 1 vs Row 2, though 20 units apart
    assert same(click(0, 0, element=0), click(500, 150))  # index and point naming one element


def test_without_trees_clicks_compare_by_distance():
    assert same(click(100, 100), click(120, 120), NO_TREE, NO_TREE)
    assert not same(click(100, 100), click(200, 100), NO_TREE, NO_TREE)
    assert same(click(0, 0, element=3), click(0, 0, element=3), NO_TREE, NO_TREE)


def test_other_action_types():
    assert same({"type": "type", "args": {"text": "hello"}}, {"type": "type", "args": {"text": "hello"}})
    assert not same({"type": "type", "args": {"text": "hello"}}, {"type": "type", "args": {"text": "helo"}})
    swipe_up = {"type": "swipe", "args": {"point": [500, 800], "end_point": [500, 200]}}
    assert same(swipe_up, {"type": "swipe", "args": {"direction": "up"}})
    assert not same(swipe_up, {"type": "swipe", "args": {"direction": "down"}})
    assert same({"type": "answer", "args": {"text": " Paris "}}, {"type": "answer", "args": {"text": "paris"}})
    back, home = ({"type": "system_button", "args": {"button": b}} for b in ("back", "home"))
    assert same(back, back) and not same(back, home)
    assert not same(click(100, 100), {"type": "long_press", "args": {"point": [100, 100]}})
    assert not actions_equivalent(None, check_action(back), CTX, CTX, 40.0)


def test_malformed_actions_are_rejected():
    with pytest.raises(ForkInputError, match="action must be"):
        check_action({"args": {}})
    with pytest.raises(ForkInputError, match="action point must be"):
        check_action({"type": "click", "args": {"point": [1, 2, 3]}})
    with pytest.raises(ForkInputError, match="action element must be"):
        check_action({"type": "click", "args": {"element": -1}})
