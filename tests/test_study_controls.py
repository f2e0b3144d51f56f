"""Study controls a flashcard user expects: the daily new-question limit, undo of a rating,
suspend and flag, and the path through the exercises."""

from __future__ import annotations

import json
import random
import time
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner
from test_bank_validation import GOOD

from quizapp.bank import load_bank
from quizapp.catalog import Exercise
from quizapp.cli import cli
from quizapp.interview.plan import pick_questions
from quizapp.study.due import due_plan
from quizapp.study.limits import new_today
from quizapp.study.path import next_exercise
from quizapp.study.queue import study_queue
from quizapp.study.schedule import record_review
from quizapp.study.session import StudySession
from quizapp.study.stats import ExerciseStats, Stats, TopicStats, compute_stats
from quizapp.study.store import DEFAULT_NEW_PER_DAY, NEW_PER_DAY_KEY, Store, UndoRefused
from quizapp.study.transfer import export_progress, import_progress

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
IDS = ["demo-single", "demo-multi", "demo-numeric", "demo-text", "demo-order", "demo-card"]


class Clock:
    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

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


@pytest.fixture
def local_tz(monkeypatch):
    """Local time two hours ahead of UTC: local midnight is 22:00 UTC."""
    monkeypatch.setenv("TZ", "Etc/GMT-2")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def answer_all(session: StudySession, clock: Clock, rating: int = 3) -> list[str]:
    done = []
    while (q := session.current) is not None:
        session.show()
        session.check(None if q.type == "card" else _right(q))
        session.rate(rating)
        done.append(q.id)
        clock.advance(minutes=1)
        session.next()
    return done


def _right(q):
    return {"single": 2, "multi": [0, 2], "numeric": "65504", "text": "bf16", "order": [0, 1, 2, 3, 4]}[q.type]


def new_in(queue, store) -> list[str]:
    cards = store.cards()
    return [q.id for q in queue if q.id not in cards]


# -- the daily limit ---------------------------------------------------------------------------

def test_the_daily_limit_counts_across_sessions_on_a_fake_clock(bank, store):
    assert store.new_per_day() == DEFAULT_NEW_PER_DAY == 20
    store.set_setting(NEW_PER_DAY_KEY, 3)
    clock = Clock()
    first = study_queue(bank, store, now=clock(), new_limit=new_today(store, clock()).left)
    assert len(first) == 3
    session = StudySession(first[:2], store, clock=clock, title="one")  # the learner stops after two
    answer_all(session, clock)
    assert new_today(store, clock()) == (3, 2) and new_today(store, clock()).left == 1
    clock.advance(hours=3)  # a second session the same day: one new question left
    second = study_queue(bank, store, now=clock(), new_limit=new_today(store, clock()).left)
    assert len(new_in(second, store)) == 1
    answer_all(StudySession(second, store, clock=clock, title="two"), clock)
    assert new_today(store, clock()).left == 0
    third = study_queue(bank, store, now=clock(), new_limit=new_today(store, clock()).left)
    assert new_in(third, store) == []  # only cards due (the learning steps), no new question
    clock.advance(days=1)  # the next day: three more
    assert new_today(store, clock()) == (3, 0)
    fourth = study_queue(bank, store, now=clock(), new_limit=new_today(store, clock()).left)
    assert len(new_in(fourth, store)) == 3


def test_a_question_is_new_on_the_local_day_of_its_first_answer(bank, store, local_tz):
    store.set_setting(NEW_PER_DAY_KEY, 2)
    late = datetime(2026, 3, 2, 21, 30, tzinfo=timezone.utc)  # 23:30 local
    clock = Clock(late)
    queue = study_queue(bank, store, now=clock(), new_limit=new_today(store, clock()).left)
    answer_all(StudySession(queue, store, clock=clock, title="late"), clock)
    assert new_today(store, clock()).left == 0
    # a re-answer after midnight does not make the question new again, and does not count
    clock.now = datetime(2026, 3, 2, 22, 30, tzinfo=timezone.utc)  # 00:30 local, the next local day
    assert new_today(store, clock()) == (2, 0)
    record_review(store, bank.questions["demo-single"], rating=3, correct=True, now=clock())
    assert new_today(store, clock()) == (2, 0)
    # 21:59 UTC is still the earlier local day
    assert new_today(store, datetime(2026, 3, 2, 21, 59, tzinfo=timezone.utc)).taken == 2


def test_review_new_overrides_the_limit_for_one_session(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    result = CliRunner().invoke(cli, ["review", "--topic", "demo", "--new", "2"], input="3\n\nbf16\n\n",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "2 questions." in result.output and "Answered 2 of 2" in result.output
    assert CliRunner().invoke(cli, ["config", "new-per-day", "2"]).exit_code == 0
    # the daily limit (2) is used up: nothing new without --new
    again = CliRunner().invoke(cli, ["review", "--topic", "demo"], input="", catch_exceptions=False)
    assert "today's 2 new questions are done" in again.output and "--new N" in again.output
    shown = CliRunner().invoke(cli, ["config", "new-per-day"])
    assert "new-per-day = 2 (2 new today, 0 left)" in shown.output
    more = CliRunner().invoke(cli, ["review", "--topic", "demo", "--new", "1"], input="", catch_exceptions=False)
    assert "1 question." in more.output
    due = CliRunner().invoke(cli, ["due", "--json"])
    assert json.loads(due.output)["new_today"] == {"limit": 2, "taken": 2, "left": 0}
    assert "New today: 0 left of your daily 2" in CliRunner().invoke(cli, ["due"]).output


def test_config_refuses_a_bad_limit():
    result = CliRunner().invoke(cli, ["config", "new-per-day", "-3"])
    assert result.exit_code == 2 and "-3" in result.output


# -- undo --------------------------------------------------------------------------------------

def test_undo_puts_the_card_back_exactly_and_the_export_never_shows_the_answer(bank, store):
    clock = Clock()
    q = bank.questions["demo-single"]
    record_review(store, q, rating=3, correct=True, now=clock() - timedelta(days=3))
    before_card = store.card_json(q.id)
    before_row = store.cards()[q.id]
    session = StudySession([q, bank.questions["demo-text"]], store, clock=clock, title="t")
    session.show()
    session.check(0)
    answered = session.rate(1)  # wrong, Again: requeued
    assert answered.requeued and store.card_json(q.id) != before_card
    session.next()
    assert session.can_undo
    undone = session.undo()
    assert undone is answered
    assert store.card_json(q.id) == before_card  # the FSRS card JSON, byte for byte
    assert store.cards()[q.id] == before_row
    assert [r["rating"] for r in store.answers()] == [3]
    assert session.current.id == q.id and [x.id for x in session.questions] == [q.id, "demo-text"]
    assert session.answered == [] and not session.can_undo
    document = export_progress(store)
    assert [a["rating"] for a in document["answers"]] == [3]
    assert answered.uid not in json.dumps(document)


def test_undo_of_a_first_answer_deletes_the_card(bank, store):
    clock = Clock()
    session = StudySession([bank.questions["demo-card"]], store, clock=clock, title="t")
    session.show()
    session.check(None)
    session.rate(4)
    assert "demo-card" in store.cards()
    session.next()
    session.undo()
    assert "demo-card" not in store.cards() and store.answer_count() == 0
    assert session.current.id == "demo-card"


def test_undo_is_refused_when_the_question_was_answered_again_elsewhere(bank, store):
    clock = Clock()
    q = bank.questions["demo-single"]
    session = StudySession([q], store, clock=clock, title="t")
    session.show()
    session.check(2)
    session.rate(3)
    session.next()
    record_review(store, q, rating=4, correct=True, now=clock() + timedelta(minutes=1))  # another window
    with pytest.raises(UndoRefused, match="answered again since"):
        session.undo()
    assert store.answer_count() == 2  # nothing changed


def test_u_at_the_next_prompt_undoes_the_rating_in_review(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    with Store.open() as store:
        store.set_setting(NEW_PER_DAY_KEY, 2)
    # demo-single right and rated Easy; u at demo-text's prompt; demo-single again, rated Hard; then text
    result = CliRunner().invoke(cli, ["review", "--topic", "demo"], input="3\n4\nu\n3\n2\nbf16\n\n",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Took back your rating of demo-single (Easy)" in result.output
    with Store.open() as store:
        rows = [(r["question_id"], r["rating"]) for r in store.answers()]
        card = json.loads(store.card_json("demo-single"))
    assert rows == [("demo-single", 2), ("demo-text", 3)]
    assert card["step"] is not None and card["state"] == 1  # Hard on a new card: still learning, as if Easy never was
    assert "Answered 2 of 2" in result.output


def test_u_with_nothing_to_undo_is_an_answer(write_pack, quizapp_home):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    random.seed(0)
    result = CliRunner().invoke(cli, ["review", "--topic", "demo"], input="u\n", catch_exceptions=False)
    assert "Took back" not in result.output and "Type a number from 1 to 3." in result.output


# -- suspend and flag --------------------------------------------------------------------------

def test_a_suspended_question_is_in_no_queue_due_count_or_interview_until_unsuspended(bank, store):
    past = NOW - timedelta(days=30)
    for qid in IDS:
        record_review(store, bank.questions[qid], rating=3, correct=True, now=past)
    topics = {q.id: q.topic for q in bank.questions.values()}
    assert {q.id for q in study_queue(bank, store, now=NOW)} == set(IDS)
    store.set_mark("demo-text", suspended=True)
    assert "demo-text" not in {q.id for q in study_queue(bank, store, now=NOW)}
    assert "demo-text" not in {q.id for q in due_plan(store, topics, {}, NOW).questions}
    stats = compute_stats(bank.outline(), store, now=NOW)
    assert stats.due == 5
    for seed in range(5):
        picked = pick_questions(bank, store, {"demo": 1.0}, 60, NOW, random.Random(seed))
        assert "demo-text" not in {q.id for q in picked} and len(picked) == 5
    store.set_mark("demo-text", suspended=False)
    assert "demo-text" in {q.id for q in study_queue(bank, store, now=NOW)}
    assert "demo-text" in {q.id for q in due_plan(store, topics, {}, NOW).questions}
    assert compute_stats(bank.outline(), store, now=NOW).due == 6


def test_a_suspended_new_question_is_not_counted_new(bank, store):
    store.set_mark("demo-card", suspended=True)
    assert compute_stats(bank.outline(), store, now=NOW).new == 5
    assert "demo-card" not in {q.id for q in study_queue(bank, store, now=NOW)}


def test_flag_suspend_and_stats_flags_on_the_command_line(write_pack, quizapp_home):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    run = CliRunner().invoke
    flagged = run(cli, ["flag", "demo-numeric", "--note", "is 65504 the max normal or max finite?"])
    assert flagged.exit_code == 0 and "Flagged demo-numeric" in flagged.output
    assert run(cli, ["suspend", "demo-order"]).exit_code == 0
    listing = run(cli, ["stats", "--flags"], terminal_width=200)
    assert "demo-numeric" in listing.output and "is 65504 the max normal or max finite?" in listing.output
    assert "Suspended (1)" in listing.output and "demo-order" in listing.output
    assert "1 question suspended" in run(cli, ["stats"]).output
    # flag again without a note keeps the note; --clear takes both off
    run(cli, ["flag", "demo-numeric"])
    with Store.open() as store:
        assert store.marks()["demo-numeric"].note == "is 65504 the max normal or max finite?"
    assert "Cleared the flag" in run(cli, ["flag", "demo-numeric", "--clear"]).output
    assert "Unsuspended demo-order" in run(cli, ["unsuspend", "demo-order"]).output
    assert "No question is flagged or suspended" in run(cli, ["stats", "--flags"]).output


def test_an_unknown_question_id_says_so_and_suggests_search(write_pack, quizapp_home):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    for verb in (["flag"], ["suspend"], ["unsuspend"]):
        result = CliRunner().invoke(cli, [*verb, "demo-nope"])
        assert result.exit_code == 2
        assert "no question 'demo-nope'" in result.output and "quizapp search" in result.output


def test_marks_travel_in_the_export_and_import_keeps_the_later_one(bank, store, tmp_path):
    store.set_mark("demo-numeric", flagged=True, note="check the max", at=NOW)
    store.set_mark("demo-order", suspended=True, at=NOW)
    document = export_progress(store)
    assert document["question_marks"] == [
        {"question_id": "demo-numeric", "flagged": True, "note": "check the max", "suspended": False,
         "updated_at": NOW.isoformat()},
        {"question_id": "demo-order", "flagged": False, "note": None, "suspended": True,
         "updated_at": NOW.isoformat()},
    ]
    with Store.open(tmp_path / "other.db") as other:
        other.set_mark("demo-order", suspended=False, at=NOW + timedelta(hours=1))  # later there: kept
        summary = import_progress(other, json.loads(json.dumps(document)))
        assert summary.question_marks == 1 and summary.changed
        marks = other.marks()
        assert marks["demo-numeric"].note == "check the max" and marks["demo-numeric"].flagged
        assert not marks["demo-order"].suspended
        again = import_progress(other, document)
        assert not again.changed  # importing the same file twice changes nothing
        assert other.marks() == marks


def test_an_older_file_without_marks_still_imports(store):
    older = export_progress(store)
    del older["question_marks"]
    summary = import_progress(store, older)
    assert summary.question_marks == 0 and store.marks() == {}


def test_a_damaged_mark_is_refused(store):
    from quizapp.study.transfer import TransferError

    document = export_progress(store)
    document["question_marks"] = [{"question_id": "x", "flagged": "yes", "note": None, "suspended": False,
                                   "updated_at": NOW.isoformat()}]
    with pytest.raises(TransferError, match=r"question_marks\[0\]\.flagged"):
        import_progress(store, document)


# -- the path through the exercises ------------------------------------------------------------

def _exercise(ex_id: str, topic: str, difficulty: int) -> Exercise:
    return Exercise(ex_id, ex_id.title(), topic, difficulty, "", (), None)


def test_the_next_exercise_is_in_the_weakest_topic_then_the_easiest_not_yet_passed():
    catalog = {e.id: e for e in (_exercise("a_hard", "weak", 3), _exercise("a_easy", "weak", 1),
                                 _exercise("b_easy", "strong", 1), _exercise("c_done", "weak", 1))}
    topics = [TopicStats("weak", "Weak", 10, 1, 1, 1, 1, 0, 0.1), TopicStats("strong", "Strong", 10, 9, 9, 9, 9, 0, 0.9)]
    exercises = [ExerciseStats("c_done", 1, True, 3, 3, "pass")] + [ExerciseStats(i, 0, False, 0, 0, None)
                                                                     for i in ("a_hard", "a_easy", "b_easy")]
    stats = Stats(topics, exercises, 0, False, {}, {})
    assert next_exercise(catalog, stats).id == "a_easy"
    passed = stats._replace(exercises=[e._replace(passed=True) if e.exercise_id == "a_easy" else e for e in exercises])
    assert next_exercise(catalog, passed).id == "a_hard"
    everything = stats._replace(exercises=[e._replace(passed=True) for e in exercises])
    assert next_exercise(catalog, everything) is None


def test_list_marks_the_next_exercise():
    result = CliRunner().invoke(cli, ["list"], terminal_width=200)
    assert result.exit_code == 0 and "· next" in result.output and "Next on your path:" in result.output
