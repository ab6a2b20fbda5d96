"""Typed/answered-text constrained decoding: a type action's text is what a hint says to type,
else a quoted string (else a word run) of the instruction; an answer's is what a hint says to
answer, when one does; everything else stays free."""

from __future__ import annotations

import json
import random

import pytest
import torch

from ops.actions.formats.label_echo import split_echo
from ops.actions import Action, ActionType
from ops.agent.episode import Hint, Observation, PolicyRequest
from phonesim.phone import Phone
from training.base.bundled import BUNDLED_DIR
from training.inference.local_policy import GenerationSettings, LocalPolicy, load_processor
from training.inference.typing_constraint import TypedTextConstraint, quoted, text_spans, token_pieces, typable_texts

OPENED = '- Search #1\n{"type":"type","args":{"element":1,"text":"'


@pytest.fixture(scope="module")
def tokenizer():
    return load_processor(BUNDLED_DIR).tokenizer


def test_quoted_strings_are_found_and_apostrophes_open_nothing():
    assert quoted('Rename this phone to "Sam\'s Phone".') == ["Sam's Phone"]
    assert quoted("On 'list', typing 'Omar Martinez' into 'Search contacts'.") == [
        "list", "Omar Martinez", "Search contacts"]
    assert quoted("Set Fatima Brown's email to fatima.80@example.org.") == []


def test_spans_are_the_quoted_strings_when_there_are_any():
    assert text_spans(['Message Ana Chen: "Thanks, see you there"', "On 'list', click 'Ana Chen'."]) == {
        "Thanks, see you there", "list", "Ana Chen"}


def test_hints_say_what_to_type_and_answer():
    plan = "On 'list', typing 'Omar Martinez' into 'Search contacts'. On 'detail', answering '13:30'."
    assert typable_texts('Find "Omar"', [plan]) == {"type": {"Omar Martinez"}, "answer": {"13:30"}}
    assert typable_texts('Find "Omar"', ["On 'launcher', click 'Contacts'."]) == {"type": {"Omar"}}
    assert typable_texts("Rename it to Sam's Phone", ["On 'edit', typing 'Sam's Phone'."])["type"] == {"Sam's Phone"}


def test_without_quotes_spans_are_word_runs_with_their_ends_trimmed():
    spans = text_spans(["Set Fatima Brown's email to fatima.80@example.org."])
    assert {"fatima.80@example.org", "Fatima Brown's", "Set Fatima Brown's email"} <= spans
    assert "fatima.80@example.org." not in spans  # sentence punctuation is not typed
    assert len(text_spans(["one two three four five six seven eight nine ten"], max_words=3)) == 10 + 9 + 8
    assert text_spans(["Set it to 5"]) >= {"5", "Set it to 5"}
    assert text_spans([]) == frozenset()


def _allowed(constraint: TypedTextConstraint, tokenizer, generated: str) -> set[int]:
    ids = tokenizer("P", add_special_tokens=False).input_ids + tokenizer(generated, add_special_tokens=False).input_ids
    constraint.prompt_length = len(ids) - len(tokenizer(generated, add_special_tokens=False).input_ids)
    scores = constraint(torch.tensor([ids]), torch.zeros(1, len(tokenizer)))
    return {i for i in range(len(tokenizer)) if scores[0, i] > -float("inf")}


def test_inside_typed_text_only_span_continuations_are_allowed(tokenizer):
    pieces = token_pieces(tokenizer)
    constraint = TypedTextConstraint([{"type": {"Pharmacy", "Phone"}}], 0, tokenizer, pieces)
    allowed = {pieces[i] for i in _allowed(constraint, tokenizer, OPENED + "Ph")}
    assert allowed and all(("Ph" + p).startswith(("Pharmacy\"", "Phone\"")) or
                           "Pharmacy\"".startswith("Ph" + p) or "Phone\"".startswith("Ph" + p) for p in allowed)
    assert "a" in allowed and "o" in allowed and "x" not in allowed
    assert '"' in _allowed_pieces(constraint, tokenizer, pieces, OPENED + "Phone")
    assert '"' not in _allowed_pieces(constraint, tokenizer, pieces, OPENED + "Pho")  # no span ends there


def _allowed_pieces(constraint, tokenizer, pieces, generated: str) -> set[str]:
    return {pieces[i] for i in _allowed(constraint, tokenizer, generated)}


def test_outside_typed_text_everything_is_free(tokenizer):
    pieces = token_pieces(tokenizer)
    constraint = TypedTextConstraint([{"type": {"Pharmacy"}}], 0, tokenizer, pieces)
    every = set(range(len(tokenizer)))
    assert _allowed(constraint, tokenizer, '- Wi-Fi #0\n{"type":"click","args":{"element":0') == every
    assert _allowed(constraint, tokenizer, '{"type":"answer","args":{"text":"') == every  # no hint answers: free
    assert _allowed(constraint, tokenizer, OPENED + 'Pharmacy"') == every  # closed: the JSON's end is free
    assert _allowed(TypedTextConstraint([{"type": set()}], 0, tokenizer, pieces), tokenizer, OPENED) == every


def test_an_answer_a_hint_gives_is_held_to_it(tokenizer):
    pieces = token_pieces(tokenizer)
    constraint = TypedTextConstraint([{"type": {"x"}, "answer": {"13:30"}}], 0, tokenizer, pieces)
    allowed = _allowed_pieces(constraint, tokenizer, pieces, '{"type":"answer","args":{"text":"13')
    assert ":" in allowed and "0" not in allowed


def test_a_token_that_opens_the_text_must_open_it_on_a_span(tokenizer):
    pieces = token_pieces(tokenizer)
    constraint = TypedTextConstraint([{"type": {"Pharmacy"}}], 0, tokenizer, pieces)
    allowed = _allowed_pieces(constraint, tokenizer, pieces, OPENED[:-1])  # up to `"text":`
    assert '"' in allowed
    assert all(not p.startswith('"') or "Pharmacy\"".startswith(p[1:]) or p[1:].startswith("Pharmacy\"")
               for p in allowed)


@pytest.mark.parametrize("seed", range(5))
def test_decoding_random_scores_under_the_constraint_types_a_span(tokenizer, seed):
    """Drive the processor like `generate` with random logits: whatever the scores, the typed text
    is one of the spans and closes."""
    pieces = token_pieces(tokenizer)
    spans = text_spans(['Name the note "Door code 4471" and file it under Work.', "On 'list', click 'New note'."])
    constraint = TypedTextConstraint([{"type": spans}], 0, tokenizer, pieces)
    rng = torch.Generator().manual_seed(seed)
    ids = tokenizer(OPENED, add_special_tokens=False).input_ids
    for _ in range(40):
        scores = constraint(torch.tensor([ids]), torch.randn(1, len(tokenizer), generator=rng))
        ids.append(int(scores.argmax()))
        text = tokenizer.decode(ids)
        if '"' in text[len(OPENED):]:
            break
    typed = tokenizer.decode(ids)[len(OPENED):].split('"')[0]
    assert typed in spans


def _screen_with_field() -> Observation:
    phone = Phone(0, (540, 1200))
    phone.launch("contacts")
    obs = phone.observe()
    assert any(e["class"].endswith("EditText") for e in obs.elements)  # the list has a search field
    return Observation(screenshot_png=b"", elements=obs.elements, a11y=obs.a11y, app=obs.app, screen=obs.screen)


def test_every_text_the_bundled_policy_types_comes_from_its_prompt():
    policy = LocalPolicy(BUNDLED_DIR, "elements", batch_size=8,
                         generation=GenerationSettings(max_new_tokens=48, constrain_echo=True, constrain_typing=True))
    observation = _screen_with_field()
    rng = random.Random(0)
    hint = Hint(1, "", [], [], [], "On 'list', typing 'Omar Martinez' into 'Search contacts'.")
    requests = []
    for text in ("Omar Martinez", "Pharmacy", "995.31", "see you at noon", "Thanks"):
        for form in ('Type "{t}"', 'Search for "{t}"', "Search for {t}", 'Enter "{t}"'):
            requests.append(PolicyRequest(observation, form.format(t=text), [], [hint] if rng.random() < 0.3 else []))
    typed = []
    for request, out in zip(requests, policy.act_batch(requests)):
        body = split_echo(out.raw_text)[1]
        try:
            action = Action.from_dict(json.loads(body))
        except (ValueError, TypeError):
            continue
        if action.type == ActionType.TYPE:
            typed.append(action.text)
            assert action.text in typable_texts(request.instruction, [h.hint_summary for h in request.hints])["type"]
    assert len(typed) >= len(requests) // 2  # the check is not vacuous
