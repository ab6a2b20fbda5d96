"""Row-echo constrained decoding: once an output starts a row echo it can only spell one of the
screen's rows; other outputs stay free."""

from __future__ import annotations

import torch

from ops.actions.formats.label_echo import render_row, split_echo
from ops.agent.episode import Observation, PolicyRequest
from ops.agent.policy_prompt import element_label
from phonesim.phone import Phone
from training.base.bundled import BUNDLED_DIR
from training.inference.echo_constraint import RowEchoConstraint
from training.inference.local_policy import GenerationSettings, LocalPolicy


def _allowed(constraint: RowEchoConstraint, generated: list[int], vocab: int = 10) -> set[int]:
    ids = torch.tensor([[0, 0, *generated]])  # a two-token prompt, then what was generated
    scores = constraint(ids, torch.zeros(1, vocab))
    return {i for i in range(vocab) if scores[0, i] > -float("inf")}


def test_the_constraint_follows_row_lines_and_leaves_other_outputs_free():
    rows = [[5, 6, 9], [5, 7, 9]]  # two row lines sharing their first token; 9 is the newline
    constraint = RowEchoConstraint([rows], prompt_length=2, dashes=frozenset({5, 8}))
    assert _allowed(constraint, []) == set(range(10)) - {8}  # a dash that starts no row is out
    assert _allowed(constraint, [5]) == {6, 7}
    assert _allowed(constraint, [5, 7]) == {9}
    assert _allowed(constraint, [5, 7, 9]) == set(range(10))  # the row line is done: the JSON is free
    assert _allowed(constraint, [3, 5]) == set(range(10))  # no echo begun


def test_every_echo_of_the_bundled_policy_names_a_row_of_its_screen():
    policy = LocalPolicy(BUNDLED_DIR, "elements", batch_size=8,
                         generation=GenerationSettings(max_new_tokens=48, constrain_echo=True))
    phone = Phone(0, (540, 1200))
    requests = []
    for app in ("settings", "clock", "contacts", "notes"):
        phone.launch(app)
        obs = phone.observe()
        observation = Observation(screenshot_png=b"", elements=obs.elements, a11y=obs.a11y, app=obs.app,
                                  screen=obs.screen)
        for instruction in ("Turn off location access.", "Remove my 'Gym' alarm.", "Call Priya Chen.",
                            "Delete the note 'Door code'."):
            requests.append(PolicyRequest(observation, instruction, [], []))
    outputs = policy.act_batch(requests)
    echoes = [(split_echo(o.raw_text)[0], r) for o, r in zip(outputs, requests)]
    assert sum(e is not None for e, _ in echoes) >= len(requests) // 2  # the check is not vacuous
    for echo, request in echoes:
        if echo is not None:
            rows = [render_row(i, element_label(e)) for i, e in enumerate(request.observation.elements)]
            assert echo in rows, echo
