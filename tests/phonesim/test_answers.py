"""AnswerSheet typed matchers (MobileGym appendix F)."""

from __future__ import annotations

import pytest

from phonesim.answers import AnswerSpec, match_answer


@pytest.mark.parametrize("text", ["34", "34°C", "34 degrees", "about 34 Celsius", "thirty-four", "34.0"])
def test_number_equivalents_pass(text):
    assert match_answer(AnswerSpec("number", 34.0), text)[0]


@pytest.mark.parametrize("text", ["33 or 34", "35", "", "many", "33-34"])
def test_number_wrong_or_hedged_fails(text):
    assert not match_answer(AnswerSpec("number", 34.0), text)[0]


def test_number_tolerance():
    assert match_answer(AnswerSpec("number", 9.99, tolerance=0.01), "$10.00")[0]
    assert not match_answer(AnswerSpec("number", 9.99, tolerance=0.001), "10")[0]


@pytest.mark.parametrize("text", ["2024-03-05", "March 5, 2024", "5 March 2024", "03/05/2024", "Mar 5th, 2024"])
def test_date_formats(text):
    assert match_answer(AnswerSpec("date", "2024-03-05"), text)[0]


@pytest.mark.parametrize("text", ["14:30", "2:30 PM", "2:30pm", "14.30"])
def test_time_formats(text):
    assert match_answer(AnswerSpec("time", "14:30"), text)[0]


def test_time_wrong_and_ambiguous():
    assert not match_answer(AnswerSpec("time", "14:30"), "2:30 am")[0]
    assert not match_answer(AnswerSpec("time", "14:30"), "2:30 pm or 3:00 pm")[0]


def test_text_normalises_case_and_punctuation_but_rejects_hedges():
    spec = AnswerSpec("text", "HomeNet")
    assert match_answer(spec, "homenet.")[0]
    assert match_answer(spec, "The answer is HomeNet")[0]
    assert not match_answer(spec, "HomeNet or Casa-5G")[0]
    assert not match_answer(spec, "Casa-5G")[0]


def test_choice_needs_exactly_one_option():
    spec = AnswerSpec("choice", "Work", choices=("None", "Family", "Work"))
    assert match_answer(spec, "work")[0]
    assert match_answer(spec, "They are in the Work group")[0]
    assert not match_answer(spec, "Work, Family")[0]
    assert not match_answer(spec, "Family")[0]


def test_phone_digits_and_country_code():
    spec = AnswerSpec("phone", "+1 415-555-0134")
    assert match_answer(spec, "4155550134")[0]
    assert match_answer(spec, "+1 (415) 555-0134")[0]
    assert not match_answer(spec, "415-555-0135")[0]


def test_invalid_specs_are_rejected():
    with pytest.raises(ValueError):
        AnswerSpec("colour", "red")
    with pytest.raises(ValueError):
        AnswerSpec("choice", "X", choices=("A", "B"))
