"""Hypothesis strategies for canonical actions (shared by the tests in this folder)."""

from __future__ import annotations

from hypothesis import strategies as st

from ops.actions import DIRECTIONS, GRID, SYSTEM_BUTTONS, TERMINATE_STATUSES, Action, ActionType

points = st.tuples(st.integers(0, GRID), st.integers(0, GRID))
elements = st.integers(0, 50)
# Lone surrogates cannot be encoded as UTF-8, so no real model output contains them.
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
names = texts.filter(bool)
durations = st.integers(0, 120).map(lambda n: n / 2)


def _target() -> st.SearchStrategy[dict]:
    return st.one_of(
        st.fixed_dictionaries({"point": points}),
        st.fixed_dictionaries({"element": elements}),
        st.fixed_dictionaries({"point": points, "element": elements}),
    )


def _optional(**strategies: st.SearchStrategy) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({}, optional=strategies)


def _typed(atype: ActionType, kwargs: st.SearchStrategy[dict]) -> st.SearchStrategy[Action]:
    return kwargs.map(lambda kw: Action(type=atype, **kw))


def _merge(a: st.SearchStrategy[dict], b: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    return st.tuples(a, b).map(lambda pair: {**pair[0], **pair[1]})


ACTIONS_BY_TYPE: dict[ActionType, st.SearchStrategy[Action]] = {
    ActionType.CLICK: _typed(ActionType.CLICK, _target()),
    ActionType.DOUBLE_TAP: _typed(ActionType.DOUBLE_TAP, _target()),
    ActionType.LONG_PRESS: _typed(
        ActionType.LONG_PRESS, _merge(_target(), _optional(duration=durations))
    ),
    ActionType.SWIPE: _typed(
        ActionType.SWIPE,
        st.one_of(
            st.fixed_dictionaries({"point": points, "end_point": points}),
            _merge(
                st.fixed_dictionaries({"direction": st.sampled_from(DIRECTIONS)}),
                _optional(point=points, element=elements),
            ),
        ),
    ),
    ActionType.DRAG: _typed(
        ActionType.DRAG, st.fixed_dictionaries({"point": points, "end_point": points})
    ),
    ActionType.TYPE: _typed(
        ActionType.TYPE,
        _merge(st.fixed_dictionaries({"text": texts}), _optional(point=points, element=elements)),
    ),
    ActionType.ANSWER: _typed(ActionType.ANSWER, st.fixed_dictionaries({"text": texts})),
    ActionType.SYSTEM_BUTTON: _typed(
        ActionType.SYSTEM_BUTTON, st.fixed_dictionaries({"button": st.sampled_from(SYSTEM_BUTTONS)})
    ),
    ActionType.OPEN_APP: _typed(ActionType.OPEN_APP, st.fixed_dictionaries({"app": names})),
    ActionType.WAIT: _typed(ActionType.WAIT, _optional(duration=durations)),
    ActionType.TERMINATE: _typed(
        ActionType.TERMINATE,
        st.fixed_dictionaries({"status": st.sampled_from(TERMINATE_STATUSES)}),
    ),
    ActionType.KEY: _typed(ActionType.KEY, st.fixed_dictionaries({"key": names})),
}

actions = st.one_of(*ACTIONS_BY_TYPE.values())
