"""Page-action pretraining samples: every stage's target follows from the instruction and the
Done list."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from training.base.page_actions import NAVIGATION, collect_visits, page_action_sample, with_page_actions
from training.base.sim_grounding import sim_sampler


@pytest.fixture(scope="module")
def visits():
    return collect_visits(120, seed=3)


def _label(line: str) -> str:
    return line.removeprefix(label_echo.ROW_PREFIX).rsplit(label_echo.INDEX_MARK, 1)[0]


def test_buttons_are_one_line_rows_of_the_entry_page(visits):
    for v in visits:
        button = v.page.elements[v.button]
        assert button.clickable and button.label == button.text
        assert button.text not in NAVIGATION and button.text != v.listing.elements[v.row].text
        assert v.page.name != v.listing.name or v.page.elements != v.listing.elements
    assert len({v.page.elements[v.button].text for v in visits}) > 10  # many kinds of button, not a few verbs


def test_confirmations_are_dialogs_repeating_the_verb(visits):
    confirmed = [v for v in visits if v.confirm is not None]
    assert confirmed, "no confirmation dialog in 120 visits"
    for v in confirmed:
        texts = [e.text for e in v.after.elements]
        assert "Cancel" in texts
        assert v.after.elements[v.confirm].text.split()[0] == v.page.elements[v.button].text.split()[0]


def test_stages_follow_the_done_list(visits):
    rng = random.Random(0)
    kinds = Counter()
    for v in visits:
        for _ in range(6):
            s = page_action_sample(rng, v, ("- Unrelated #4",))
            name = v.listing.elements[v.row].text
            button = v.page.elements[v.button].text
            assert name in s.instruction and button.lower() in s.instruction.lower()
            done = [_label(line) for line in s.history[1:]]
            kinds[len(done)] += 1
            if not done:  # nothing done yet: open the entry
                assert s.target == Action(ActionType.CLICK, element=v.row) and s.elements == v.listing.elements
            elif s.elements == v.page.elements and s.target.type == ActionType.CLICK:
                # the entry is open: press the button, not the entry's title, also after another button
                assert done[0] == v.listing.elements[v.row].label and len(done) in (1, 2)
                assert s.target == Action(ActionType.CLICK, element=v.button)
                if len(done) == 2:
                    kinds["other button"] += 1
                    assert done[1] != v.page.elements[v.button].label and done[1] in [e.label for e in v.page.elements]
            elif s.target.type == ActionType.CLICK:  # the dialog asks: confirm
                assert v.confirm is not None and s.target.element == v.confirm and s.elements == v.after.elements
            else:
                assert s.target == Action(ActionType.TERMINATE, status="success")
                assert done[1] == v.page.elements[v.button].label
                assert len(done) == (3 if v.confirm is not None else 2)
    assert {0, 1, 2, 3, "other button"} <= set(kinds)


def test_share_zero_is_the_wrapped_stream_and_bad_shares_fail():
    base = sim_sampler(n_screens=30, seed=1)
    assert with_page_actions(base, 0.0) is base  # the recipe (and its name in provenance) is unchanged
    with pytest.raises(ValueError, match="share"):
        with_page_actions(base, 1.5)


def test_mixed_stream_draws_the_page_actions_at_about_its_share():
    fn = with_page_actions(sim_sampler(n_screens=30, seed=1), 0.3, n_visits=40, seed=2)
    rng = random.Random(7)
    kinds = Counter(fn(rng, False).kind for _ in range(600))
    share = (kinds["page_action"] + kinds["page_action_done"]) / 600
    assert 0.22 < share < 0.38, kinds
    assert fn(rng, True).image is not None  # rendered samples stay the wrapped generator's
