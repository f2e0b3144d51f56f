"""Answer checking for every question type, with property tests: no input crashes the checker."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.bank import Question, check_answer, normalise_text, parse_number


def make(qtype: str, **fields) -> Question:
    base = dict(id="q", type=qtype, difficulty=1, prompt="p", explanation="e", topic="t",
                source=Path("t.yaml"), line=1)
    base.update(fields)
    return Question(**base)


SINGLE = make("single", choices=("a", "b", "c"), answer=1)
MULTI = make("multi", choices=("a", "b", "c", "d"), answer=(0, 2))
NUMERIC = make("numeric", answer=65504.0, tolerance=0.001)
EXACT = make("numeric", answer=0.0078125)
TEXT = make("text", answer=("bfloat16", "bf16", "brain float 16"))
ORDER = make("order", items=("scale", "backward", "unscale_", "clip", "step", "update"))
CARD = make("card")
ALL = [SINGLE, MULTI, NUMERIC, EXACT, TEXT, ORDER, CARD]


@pytest.mark.parametrize("response,correct", [(1, True), (0, False), (2, False), ("1", True), (7, False),
                                              (-1, False), (True, False), (None, False), ("b", False)])
def test_single(response, correct):
    assert check_answer(SINGLE, response).correct is correct


@pytest.mark.parametrize("response,correct", [([0, 2], True), ((2, 0), True), ([0], False), ([0, 1, 2], False),
                                              ([], False), ([0, 9], False), ("02", False), (None, False)])
def test_multi(response, correct):
    assert check_answer(MULTI, response).correct is correct


@pytest.mark.parametrize("response,correct", [
    ("65504", True), ("65,504", True), (65504, True), ("65500", True),  # within 0.1 %
    ("65400", False), ("6.5504e4", True), ("2^17", False), ("inf", False), ("", False), ("abc", False),
])
def test_numeric_with_relative_tolerance(response, correct):
    assert check_answer(NUMERIC, response).correct is correct


@pytest.mark.parametrize("response,correct", [("0.0078125", True), ("2^-7", True), ("2**-7", True),
                                              ("1/128", True), ("0.0078", False), ("1/0", False)])
def test_numeric_exact(response, correct):
    assert check_answer(EXACT, response).correct is correct


@pytest.mark.parametrize("response,correct", [("bfloat16", True), ("  BF16 ", True), ("Brain   Float\t16", True),
                                              ("float16", False), ("", False), (16, False)])
def test_text_is_normalised(response, correct):
    assert check_answer(TEXT, response).correct is correct


def test_order():
    assert check_answer(ORDER, [0, 1, 2, 3, 4, 5]).correct is True
    assert check_answer(ORDER, [0, 1, 3, 2, 4, 5]).correct is False  # clip before unscale_
    verdict = check_answer(ORDER, [0, 1, 2])
    assert verdict.correct is False and "every item" in verdict.note


def test_card_is_self_rated():
    verdict = check_answer(CARD, "anything")
    assert verdict.correct is None and verdict.expected == "(see the model answer)"


def test_expected_answer_is_readable():
    assert check_answer(SINGLE, 0).expected == "b"
    assert check_answer(MULTI, []).expected == "a; c"
    assert check_answer(ORDER, []).expected == "scale -> backward -> unscale_ -> clip -> step -> update"
    assert check_answer(NUMERIC, "1").expected == "65504 (accepted: 65440 to 65560)"
    assert check_answer(EXACT, "1").expected == "0.0078125"


@pytest.mark.parametrize("answer,tolerance,shown", [
    (1.0, 0.005, "1 (accepted: 0.995 to 1.005)"),  # "Two decimals": said in the answer's units
    (28.92, 0.0005, "28.92 (accepted: 28.91 to 28.93)"),
    (30.0, 0.01, "30 (accepted: 29.7 to 30.3)"),
    (-2.5, 0.01, "-2.5 (accepted: -2.52 to -2.48)"),  # rounded inwards: both ends count
    (0.000488, 0.002, "0.000488 (accepted: 0.0004871 to 0.0004889)"),
    (1e-300, 0.1, "1e-300 (accepted: 9e-301 to 1.1e-300)"),
    (0.0, 0.1, "0"),  # a relative tolerance around 0 accepts only 0
])
def test_a_tolerance_is_said_as_the_range_it_accepts(answer, tolerance, shown):
    assert check_answer(make("numeric", answer=answer, tolerance=tolerance), "x").expected == shown


@settings(max_examples=300, deadline=None)
@given(answer=st.floats(min_value=-1e12, max_value=1e12).filter(lambda a: abs(a) > 1e-12),
       tolerance=st.sampled_from([0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.1]))
def test_both_ends_of_the_range_shown_are_accepted_as_typed(answer, tolerance):
    q = make("numeric", answer=answer, tolerance=tolerance)
    low, high = q_range = check_answer(q, "x").expected.split("(accepted: ")[1].rstrip(")").split(" to ")
    assert check_answer(q, low).correct and check_answer(q, high).correct, q_range
    assert float(low) <= answer <= float(high)


def test_normalise_text():
    assert normalise_text("  Loss\n  Scaling ") == "loss scaling"


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda children: st.lists(children) | st.tuples(children) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(response=anything)
def test_no_input_crashes_the_checker(response):
    for question in ALL:
        verdict = check_answer(question, response)
        assert verdict.correct in (True, False, None)
        assert isinstance(verdict.expected, str)


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_parse_number_never_raises(text):
    value = parse_number(text)
    assert value is None or isinstance(value, float)


@given(value=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_a_number_typed_as_shown_is_accepted(value):
    question = make("numeric", answer=value)
    assert check_answer(question, repr(value)).correct is True


@given(order=st.permutations(range(6)))
def test_only_the_right_order_is_right(order):
    assert check_answer(ORDER, order).correct is (list(order) == list(range(6)))


@pytest.mark.parametrize("response,correct", [
    ("33.3%", True), ("33.3 %", True), ("33.3", True), ("0.333", False), ("3.33%", False), ("%", False),
])
def test_a_percent_sign_reads_as_a_percentage(response, correct):
    assert check_answer(make("numeric", answer=33.3, tolerance=0.01), response).correct is correct


@pytest.mark.parametrize("response,correct", [("25%", True), ("0.25", True), ("25", False)])
def test_a_percent_sign_reads_as_a_fraction_too(response, correct):
    assert check_answer(make("numeric", answer=0.25, tolerance=0.001), response).correct is correct
