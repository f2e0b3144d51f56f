"""The headless study session that `quizapp review` and the app's quiz both drive: checking, saving
each rating once, Again coming back, leaving with an answer not yet rated, and the result."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from test_bank_validation import GOOD

from quizapp.bank import load_bank
from quizapp.study.queue import MAX_REASKS
from quizapp.study.schedule import record_review
from quizapp.study.session import SAVE_ERRORS, AskAgain, StudySession
from quizapp.study.store import Store, StoreFailed

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def bank(write_pack):
    return load_bank([write_pack(GOOD)])


@pytest.fixture
def store():
    with Store.open() as opened:
        yield opened


def session_of(bank, store, *ids: str, clock=None, **kwargs) -> StudySession:
    return StudySession([bank.questions[i] for i in ids], store, clock=clock or Clock(), title="Demo", **kwargs)


def stored(store) -> list[tuple]:
    return [(r["question_id"], r["correct"], r["rating"]) for r in store.answers()]


def answer(session: StudySession, response, rating: int):
    session.show()
    session.check(response)
    return session.rate(rating)


def test_a_number_with_a_unit_is_asked_again_never_saved_as_wrong(bank, store):
    """The rule every front end asks through: "1 GiB" on a numeric question is no answer yet."""
    session = session_of(bank, store, "demo-numeric")
    session.show()
    with pytest.raises(AskAgain, match="without 'GiB'"):
        session.check("1 GiB")
    assert session.pending is None and stored(store) == []
    assert session.check("65504").correct is True


def test_a_rated_answer_is_saved_once_with_its_verdict_time_and_due_date(bank, store):
    clock = Clock()
    session = session_of(bank, store, "demo-single", "demo-text", clock=clock)
    session.show()
    clock.advance(seconds=12)
    verdict = session.check(2)
    assert verdict.correct is True and session.pending.suggested == 3
    assert stored(store) == []  # checked, not yet rated: nothing saved
    clock.advance(seconds=5)  # the time spent rating is not the answer's
    answered = session.rate(3)
    (row,) = store.answers()
    assert (row["question_id"], row["correct"], row["rating"], row["duration_ms"]) == ("demo-single", 1, 3, 12000)
    assert row["answered_at"].startswith("2026-03-01T12:00:17")
    assert answered.due == datetime.fromisoformat(store.cards()["demo-single"][0])
    assert session.pending is None and session.answered == [answered]
    assert session.next().id == "demo-text" and session.position == (2, 2)


def test_every_rating_goes_through_record_once(bank, store):
    calls = []

    def record(*args, **kwargs):
        calls.append((args[1].id, kwargs["rating"]))
        return record_review(*args, **kwargs)

    session = session_of(bank, store, "demo-single", "demo-multi", "demo-card", record=record)
    for response, rating in ((0, 1), ([0, 2], 3), (None, 4)):
        answer(session, response, rating)
        session.next()
    assert calls == [("demo-single", 1), ("demo-multi", 3), ("demo-card", 4)]
    assert stored(store) == [("demo-single", 0, 1), ("demo-multi", 1, 3), ("demo-card", None, 4)]


def test_again_brings_the_question_back_as_a_reask_of_its_own(bank, store):
    session = session_of(bank, store, "demo-single", "demo-text")
    first = answer(session, 0, 1)  # wrong, rated Again
    assert first.requeued and not first.again
    assert [q.id for q in session.questions] == ["demo-single", "demo-text", "demo-single"]
    assert session.result.total == 2  # distinct questions; the re-ask comes on top
    session.next()
    assert not session.asked_before(session.current)
    answer(session, "bf16", 3)
    assert session.next().id == "demo-single" and session.position == (3, 3)
    assert session.asked_before(session.current)  # derived from the session's answers
    second = answer(session, 2, 3)
    assert second.again and not second.requeued
    assert session.next() is None
    assert stored(store) == [("demo-single", 0, 1), ("demo-text", 1, 3), ("demo-single", 1, 3)]


def test_again_comes_back_at_most_a_few_times(bank, store):
    session = session_of(bank, store, "demo-single")
    times = 0
    while session.current is not None:
        answer(session, 0, 1)
        times += 1
        session.next()
    assert times == 1 + MAX_REASKS


def test_asked_before_follows_the_saved_answers_only(bank, store):
    session = session_of(bank, store, "demo-single")
    q = session.current
    session.check(0)
    assert not session.asked_before(q)  # checked but not saved
    session.rate(2)
    assert session.asked_before(q)


def test_key_point_ticks_give_the_response_and_the_suggested_rating(bank, store):
    card = replace(bank.questions["demo-card"], key_points=("one", "two", "three", "four"))
    session = StudySession([card], store, clock=Clock(), title="Cards")
    assert session.check(None).correct is None and session.pending.suggested == 3  # a card: Good until ticked
    assert session.tick([2, 0, 2]) == 2  # 2 of 4: Hard
    assert session.tick([0, 1, 3]) == 3  # 3 of 4: Good
    session.rate(session.pending.suggested)
    (row,) = store.answers()
    assert row["rating"] == 3 and row["response"] == '{"covered": [0, 1, 3]}'


def test_leaving_saves_the_pending_answer_with_the_selected_rating(bank, store):
    session = session_of(bank, store, "demo-single", "demo-text")
    session.check(0)  # wrong: Again is suggested
    answered = session.leave(2)  # the learner had moved the rating to Hard
    assert answered.rating == 2 and not answered.requeued  # the session is over: nothing comes back
    assert stored(store) == [("demo-single", 0, 2)]
    assert session.current is None and session.result.answered == [answered]


def test_leaving_without_a_rating_keeps_the_suggested_one_and_before_an_answer_saves_nothing(bank, store):
    session = session_of(bank, store, "demo-single", "demo-text")
    session.check(0)
    assert session.leave().rating == 1  # the suggestion: Again
    other = session_of(bank, store, "demo-text")
    assert other.leave() is None and other.current is None
    assert stored(store) == [("demo-single", 0, 1)]


def test_a_refused_save_keeps_the_answer_pending_and_a_retry_keeps_its_moment(bank, store):
    clock = Clock()
    calls = []

    def locked_once(*args, **kwargs):
        calls.append(kwargs["now"])
        if len(calls) == 1:
            raise StoreFailed(store.path, sqlite3.OperationalError("database is locked"))  # as the store raises it
        return record_review(*args, **kwargs)

    session = session_of(bank, store, "demo-single", clock=clock, record=locked_once)
    session.check(2)
    with pytest.raises(SAVE_ERRORS):
        session.rate(3)
    assert session.pending is not None and session.answered == [] and stored(store) == []
    with pytest.raises(RuntimeError):
        session.next()  # the answer would be lost
    clock.advance(minutes=1)
    session.rate(3)
    assert calls[0] == calls[1] == NOW and stored(store) == [("demo-single", 1, 3)]


def test_the_result_counts_first_tries_and_reasks(bank, store):
    session = session_of(bank, store, "demo-single", "demo-text", "demo-card")
    answer(session, 0, 1)  # wrong, Again: comes back
    session.next()
    answer(session, "bf16", 3)
    session.next()
    answer(session, None, 4)  # a card: self-rated, neither right nor wrong
    session.next()
    answer(session, 2, 3)  # the re-ask, right this time
    assert session.next() is None
    result = session.result
    assert (result.title, result.topic, result.total) == ("Demo", None, 3)
    assert [a.question.id for a in result.first_tries] == ["demo-single", "demo-text", "demo-card"]
    assert [a.question.id for a in result.checked] == ["demo-single", "demo-text"]
    assert (result.right, result.wrong, result.reasks) == (1, 1, 1)
    assert [a.rating for a in result.answered] == [1, 3, 4, 3]


def test_the_choices_seed_comes_from_the_clock(bank, store):
    assert session_of(bank, store, "demo-single").seed == NOW.isoformat()


def test_misuse_is_refused(bank, store):
    session = session_of(bank, store, "demo-single")
    with pytest.raises(RuntimeError):
        session.rate(3)  # nothing checked
    session.check(2)
    with pytest.raises(RuntimeError):
        session.check(2)  # checked already
    with pytest.raises(ValueError):
        session.rate(5)
    assert session.pending is not None and stored(store) == []


def test_the_session_imports_no_textual():
    code = "import sys, quizapp.study.session; print([m for m in ('torch', 'textual') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "[]"
