"""Exercises on the FSRS schedule, replayed from grades and events: each rule of the contract
("Exercises that come back") at its boundary."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from quizapp.study.exercise_schedule import AGAIN, GOOD, HARD, replay
from quizapp.study.store import ExerciseEvent, GradeEvent

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
EX = "lora"
STARTER = "starter-hash"


def at(**delta) -> str:
    return (T0 + timedelta(**delta)).isoformat()


def grade(status: str, file_hash: str = "h1", **delta) -> GradeEvent:
    return GradeEvent(f"g{delta}{status}{file_hash}", EX, at(**delta), status, file_hash, ())


def mark(kind: str, **delta) -> ExerciseEvent:
    return ExerciseEvent(f"e{kind}{delta}", EX, kind, at(**delta))


def state(grades, events=()):
    return replay(EX, grades, events, starter_hash=STARTER)


def test_nothing_is_scheduled_before_the_first_pass():
    s = state([grade("fail", minutes=1), grade("error", minutes=2)])
    assert not s.scheduled and s.reviews == () and s.attempts == 2


@pytest.mark.parametrize("history, events, rating", [
    ([grade("pass", minutes=5)], [], GOOD),                                     # first try, no help
    ([grade("fail", minutes=1), grade("pass", "h2", minutes=5)], [], HARD),     # failed attempts first
    ([grade("pass", minutes=5)], [mark("hint", minutes=2)], HARD),              # a hint first
    ([grade("pass", minutes=5)], [mark("solution", minutes=3)], AGAIN),         # the reference first
    ([grade("pass", minutes=5)], [mark("solution", minutes=6)], GOOD),          # read after passing: not counted
])
def test_the_first_pass_is_a_review_rated_from_how_it_went(history, events, rating):
    s = state(history, events)
    assert [r.rating for r in s.reviews] == [rating]
    assert s.scheduled and s.due > T0 + timedelta(minutes=5)  # days later: no ten-minute learning steps


def test_the_unchanged_starter_is_no_attempt():
    s = state([grade("fail", STARTER, minutes=1), grade("pass", minutes=5)])
    assert [r.rating for r in s.reviews] == [GOOD] and s.attempts == 1


def test_after_the_first_pass_it_comes_due_and_the_first_attempt_then_is_the_review():
    first = state([grade("pass", minutes=5)])
    due = first.due
    practice = state([grade("pass", minutes=5), grade("fail", "h2", minutes=30)])  # before due: practice
    assert practice.reviews == first.reviews and practice.due == due
    days = (due - T0).days + 1
    passed = state([grade("pass", minutes=5), grade("pass", "h2", days=days)])
    failed = state([grade("pass", minutes=5), grade("fail", "h2", days=days)])
    assert [r.rating for r in passed.reviews] == [GOOD, GOOD] and passed.due > due + timedelta(days=1)
    assert [r.rating for r in failed.reviews] == [GOOD, AGAIN] and failed.due < passed.due


def test_help_in_the_round_rates_the_review_but_reading_the_reference_after_passing_does_not():
    first = state([grade("pass", minutes=5)])
    due = first.due
    days = (due - T0).days + 1
    history = [grade("pass", minutes=5), grade("pass", "h2", days=days)]
    after_pass = [mark("solution", minutes=10)]  # comparing with the reference right after passing
    assert [r.rating for r in state(history, after_pass).reviews] == [GOOD, GOOD]
    in_round_hint = [mark("hint", days=days, minutes=-5)]
    assert [r.rating for r in state(history, in_round_hint).reviews] == [GOOD, HARD]
    in_round_solution = [mark("solution", days=days, minutes=-5)]
    assert [r.rating for r in state(history, in_round_solution).reviews] == [GOOD, AGAIN]


def test_the_same_code_passing_again_is_not_solved_again():
    first = state([grade("pass", minutes=5)])
    days = (first.due - T0).days + 1
    s = state([grade("pass", minutes=5), grade("pass", days=days)])  # h1 again: the old file
    assert len(s.reviews) == 1 and s.is_due(T0 + timedelta(days=days))


def test_after_an_again_the_next_round_starts_at_once():
    first = state([grade("pass", minutes=5)])
    days = (first.due - T0).days + 1
    fail = grade("fail", "h2", days=days)
    again = state([grade("pass", minutes=5), fail])
    redue = (again.due - T0)
    later = redue + timedelta(hours=1)
    hinted = [mark("hint", days=days, hours=1)]  # a hint right after the failed review counts in the next round
    s = state([grade("pass", minutes=5), fail, grade("pass", "h3", seconds=later.total_seconds())], hinted)
    assert [r.rating for r in s.reviews] == [GOOD, AGAIN, HARD]


def test_a_clock_that_went_backwards_schedules_nothing_in_the_past_twice():
    s = state([grade("pass", minutes=5), grade("fail", "h2", minutes=-60)])
    assert [r.rating for r in s.reviews] == [GOOD] and s.attempts == 1


def test_other_exercises_history_is_not_mixed_in():
    other = GradeEvent("x", "amp_training", at(minutes=1), "pass", "h9", ())
    assert not state([other]).scheduled
