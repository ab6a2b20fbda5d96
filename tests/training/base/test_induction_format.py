"""Label-echo format: rendering, round trip, element resolution, failures, index tokens."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.actions import Action, ActionType, ParseFailure
from training.base.induction_format import add_index_tokens
from ops.actions.formats.label_echo import (
    index_tokens,
    parse_output,
    prompt_text,
    render_rows,
    render_target,
)
from training.models.tiny import build_tiny_model, load_tiny

LABELS = ["Settings", "Wi-Fi", "Bluetooth", "Settings", "Dark mode"]
CLICK2 = Action(ActionType.CLICK, element=2)
BACK = Action(ActionType.SYSTEM_BUTTON, button="back")


def test_rows_put_the_index_after_the_label_and_flatten_whitespace():
    assert render_rows(["Wi-Fi", "Dark\n mode"]) == "- Wi-Fi #0\n- Dark mode #1"


def test_prompt_is_rows_then_task():
    assert prompt_text(["Wi-Fi"], "Tap  Wi-Fi") == "- Wi-Fi #0\nTask: Tap Wi-Fi"
    assert prompt_text([], "Go back") == "Task: Go back"


def test_element_actions_echo_the_row_before_the_json():
    assert render_target(CLICK2, LABELS) == '- Bluetooth #2\n{"type":"click","args":{"element":2}}'
    assert render_target(BACK, LABELS) == '{"type":"system_button","args":{"button":"back"}}'


def test_render_rejects_an_element_outside_the_list():
    with pytest.raises(ValueError, match="outside the 5-element list"):
        render_target(Action(ActionType.CLICK, element=5), LABELS)


action_strategy = st.one_of(
    st.builds(lambda i: Action(ActionType.CLICK, element=i), st.integers(0, 4)),
    st.builds(lambda i, t: Action(ActionType.TYPE, element=i, text=t), st.integers(0, 4),
              st.text()),
    st.builds(lambda t: Action(ActionType.TYPE, text=t), st.text()),
    st.just(BACK),
)


@given(action_strategy)
def test_parse_inverts_render(action):
    assert parse_output(render_target(action, LABELS), LABELS) == action


def test_a_unique_echoed_label_overrides_a_wrong_index():
    out = parse_output('- Dark mode #2\n{"type":"click","args":{"element":2}}', LABELS)
    assert out == Action(ActionType.CLICK, element=4)


def test_a_consistent_echo_picks_among_duplicate_labels():
    out = parse_output('- Settings #3\n{"type":"click","args":{"element":3}}', LABELS)
    assert out == Action(ActionType.CLICK, element=3)


def test_unknown_or_ambiguous_labels_fall_back_to_the_json_index():
    unknown = parse_output('- Volume #1\n{"type":"click","args":{"element":1}}', LABELS)
    ambiguous = parse_output('- Settings #2\n{"type":"click","args":{"element":2}}', LABELS)
    assert unknown == Action(ActionType.CLICK, element=1)
    assert ambiguous == CLICK2


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"type":"click","args":{"element":2}}', "without the echoed row"),
        ('- Bluetooth #2\n{"type":"system_button","args":{"button":"back"}}', "without an element"),
        ("- Bluetooth #2\n{not json", "answer JSON"),
        ('- Bluetooth 2\n{"type":"click","args":{"element":2}}', "has no '#<index>'"),
        ('- Volume #9\n{"type":"click","args":{"element":9}}', "outside the 5-element list"),
        ("", "answer JSON"),
    ],
)
def test_malformed_answers_are_parse_failures(text, reason):
    out = parse_output(text, LABELS)
    assert isinstance(out, ParseFailure)
    assert reason in out.reason
    assert out.format == "label_echo"


def test_deeply_nested_json_is_a_failure_not_an_exception():
    assert isinstance(parse_output("- a #0\n" + "[" * 100_000, LABELS), ParseFailure)


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list('- #0123456789\n{}[]":,abcelmnt')) | st.characters()))
def test_parse_never_raises(text):
    assert isinstance(parse_output(text, LABELS), Action | ParseFailure)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tiny(build_tiny_model(tmp_path_factory.mktemp("induction")))


def test_index_markers_are_single_tokens_after_adding(tiny):
    model, processor = tiny
    tokenizer = processor.tokenizer
    assert add_index_tokens(tokenizer, model, count=16) == 16
    assert model.get_input_embeddings().num_embeddings == len(tokenizer)
    ids = tokenizer(render_rows(["Wi-Fi"] * 13))["input_ids"]
    marker_ids = tokenizer.convert_tokens_to_ids(index_tokens(16))
    assert [i for i in ids if i in marker_ids] == marker_ids[:13]
    assert tokenizer.decode(ids) == render_rows(["Wi-Fi"] * 13)
    assert add_index_tokens(tokenizer, model, count=16) == 0
