"""uiautomator XML -> the simulator's element list, and MobileRL appendix C preprocessing."""

import pytest

from ops.environments.a11y_tree import (
    HierarchyError, compact_text, count_tokens, parse_hierarchy, select_elements, tree_reduction,
)
from phonesim import instantiate
from phonesim.adb.uiautomator import hierarchy_xml
from phonesim.solver import shortest_path

TEMPLATES = ("contacts.edit_phone", "settings.toggle_wifi")


def _node(bounds: str, children: str = "", **attrs: str) -> str:
    extra = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<node class="android.widget.FrameLayout" bounds="{bounds}" {extra}>{children}</node>'


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_elements_from_the_dump_equal_the_simulators(template_id):
    task = instantiate(template_id, 0)
    phone = task.make_phone()
    for action in [None, *shortest_path(phone, task)]:
        if action is not None:
            phone.step(action)
        obs = phone.observe()
        tree = parse_hierarchy(hierarchy_xml(obs.a11y))
        assert select_elements(tree, obs.size) == obs.elements


def test_offscreen_invisible_and_redundant_nodes_are_dropped():
    xml = ("<?xml version='1.0' ?><hierarchy>" + _node("[0,0][100,200]", "".join([
        _node("[0,0][100,50]", _node("[10,10][90,40]", text="kept child of a dropped container")),
        _node("[0,150][100,250]", text="partly off screen"),
        _node("[0,300][100,400]", text="below the screen"),
        _node("[20,20][20,60]", text="zero width"),
        _node("[0,60][100,90]", clickable="true", visible_to_user="false"),
        _node("[0,100][100,140]", checkable="true"),
    ])) + "</hierarchy>")
    tree = parse_hierarchy(xml)
    kept = select_elements(tree, (100, 200))
    assert [e["text"] for e in kept] == ["kept child of a dropped container", ""]
    assert kept[1]["checkable"] and [e["index"] for e in kept] == [0, 1]
    everything = select_elements(tree, (100, 200), keep_offscreen=True)
    assert {"partly off screen", "below the screen"} <= {e["text"] for e in everything}


def test_compact_form_and_token_reduction():
    phone = instantiate("contacts.edit_phone", 0).make_phone()
    phone.launch("contacts")
    obs = phone.observe()
    xml = hierarchy_xml(obs.a11y)
    line = compact_text(obs.elements).splitlines()[1]
    assert "resource-id" not in line and "false" not in line and "android.widget" not in line
    reduction = tree_reduction(xml, obs.size)
    assert reduction.kept_nodes == len(obs.elements) < reduction.raw_nodes
    assert 0 < reduction.kept_tokens < reduction.raw_tokens and reduction.token_ratio < 0.5
    assert count_tokens('a="b" [1,2]') == 10


def test_a_dump_that_is_not_xml_is_a_clear_error():
    with pytest.raises(HierarchyError, match="not uiautomator XML"):
        parse_hierarchy("ERROR: could not get idle state.")
    with pytest.raises(HierarchyError, match="bounds"):
        select_elements(parse_hierarchy("<hierarchy>" + _node("[0,0]") + "</hierarchy>"), (10, 10))
