"""Simulator-screen pretraining samples: toggles follow the switch's state on screen, reads
answer with the value the named row shows, and typing gets a real share of the stream."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ops.actions import ActionType
from ops.actions.formats import label_echo
from training.sim_grounding import SWITCH_OFF, SWITCH_ON, _flipped, sim_sampler


@pytest.fixture(scope="module")
def samples():
    fn = sim_sampler(n_screens=120, seed=0)
    rng = random.Random(3)
    return [fn(rng, False) for _ in range(3000)]


def _switch_named(sample):
    """(index, wants on) of the switch whose row the toggle instruction names."""
    verb = next(v for v in SWITCH_ON + SWITCH_OFF if sample.instruction.startswith(v))
    name = sample.instruction[len(verb):].strip().strip('"')
    rows = [i for i, e in enumerate(sample.elements) if e.switch and i > 0 and name in sample.elements[i - 1].label]
    assert rows, sample.instruction
    return rows, verb in SWITCH_ON


def test_flipped_switch_labels():
    assert _flipped("ON [on]") == "OFF [off]"
    assert _flipped("OFF [off]") == "ON [on]"
    assert _flipped("(CheckBox) [off]") == "(CheckBox) [on]"
    assert _flipped(_flipped("(CheckBox) [on]")) == "(CheckBox) [on]"


def test_toggles_tap_the_named_switch_or_stop_when_it_shows_the_asked_state(samples):
    toggles = [s for s in samples if s.kind == "toggle"]
    assert len(toggles) > 60
    outcomes = Counter()
    for s in toggles:
        rows, want_on = _switch_named(s)
        if s.target.type == ActionType.CLICK:
            assert s.target.element in rows
            assert s.elements[s.target.element].label.endswith("[on]") != want_on
        else:
            assert s.target.type == ActionType.TERMINATE and s.target.status == "success"
            assert any(s.elements[i].label.endswith("[on]") == want_on for i in rows)
        if s.history:  # the Done line is a tap on a switch showing the other state than now
            index = int(s.history[-1].rsplit(label_echo.INDEX_MARK, 1)[1])
            assert s.history[-1] == label_echo.render_row(index, _flipped(s.elements[index].label))
        outcomes[(bool(s.history), s.target.type)] += 1
    # a tap in the Done list alone never decides: with and without history, both answers occur
    assert len(outcomes) == 4, outcomes


def test_reads_answer_with_the_value_the_named_row_shows(samples):
    reads = [s for s in samples if s.kind == "read"]
    assert len(reads) > 60
    for s in reads:
        assert s.target.type == ActionType.ANSWER and s.target.text
        assert any(e.name in s.instruction and e.label == f"{e.name} {s.target.text}" for e in s.elements)
    assert len({s.target.text for s in reads}) > 0.3 * len(reads)


def test_typing_is_a_real_share_of_the_stream(samples):
    """The first bundled base saw typing in ~5% of its samples and never learned to copy."""
    typed = sum(s.target.type == ActionType.TYPE for s in samples)
    assert typed > 0.15 * len(samples)
