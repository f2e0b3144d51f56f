"""The study queue and the progress figures."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from test_bank_validation import GOOD

from quizapp.bank import load_bank
from quizapp.study.queue import study_queue
from quizapp.study.schedule import record_review
from quizapp.study.stats import compute_stats, streak
from quizapp.study.store import Store

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def bank_of(write_pack):
    return load_bank([write_pack(GOOD)])


def test_new_questions_come_easiest_first(write_pack):
    bank = bank_of(write_pack)
    with Store.open() as store:
        queue = study_queue(bank, store, now=NOW)
    assert [q.difficulty for q in queue] == sorted(q.difficulty for q in queue)
    assert [q.id for q in queue][:2] == ["demo-single", "demo-text"]


def test_due_cards_come_before_new_ones_and_topic_filters(write_pack):
    bank = bank_of(write_pack)
    with Store.open() as store:
        record_review(store, bank.questions["demo-card"], rating=1, correct=None, now=NOW)
        record_review(store, bank.questions["demo-order"], rating=4, correct=True, now=NOW)
        later = NOW + timedelta(hours=1)
        queue = study_queue(bank, store, now=later)
        assert queue[0].id == "demo-card"  # Again: due in minutes
        assert "demo-order" not in [q.id for q in queue]  # Easy: days away, and not new
        assert len(queue) == len(bank.questions) - 1
        assert study_queue(bank, store, topic="nope", now=later) == []
        assert [q.id for q in study_queue(bank, store, now=later, include_new=False)] == ["demo-card"]


def test_stats_per_topic(write_pack):
    bank = bank_of(write_pack)
    with Store.open() as store:
        record_review(store, bank.questions["demo-single"], rating=3, correct=True, now=NOW)
        record_review(store, bank.questions["demo-multi"], rating=1, correct=False, now=NOW)
        record_review(store, bank.questions["demo-card"], rating=3, correct=None, now=NOW)
        store.record_grade("lora", status="pass", checks_passed=9, checks_total=9, at=NOW)
        stats = compute_stats(bank.outline(), store, now=NOW + timedelta(minutes=5), exercise_ids=("amp_training", "lora"))
        later = compute_stats(bank.outline(), store, now=NOW + timedelta(days=20))
    (topic,) = stats.topics
    assert (topic.questions, topic.seen, topic.attempts, topic.checked, topic.correct) == (6, 3, 3, 2, 1)
    assert topic.accuracy == 0.5
    assert topic.due == 1  # Again: due in a minute; Good: in ten
    assert topic.mastery == 0  # one review of each is not yet a week's hold on anything
    assert later.topics[0].mastery == 0
    assert stats.new == 3 and stats.due == 1
    assert [(e.exercise_id, e.passed, e.attempts) for e in stats.exercises] == [("amp_training", False, 0), ("lora", True, 1)]
    assert stats.exercises_passed == 1


def test_streak_counts_consecutive_days():
    today = date(2026, 3, 10)
    days = {today, today - timedelta(days=1), today - timedelta(days=2), today - timedelta(days=4)}
    assert streak(days, today) == 3
    assert streak(days - {today}, today) == 2  # today still open: the streak stands until midnight
    assert streak({today - timedelta(days=2)}, today) == 0
    assert streak(set(), today) == 0


def test_new_questions_take_turns_across_topics(write_pack):
    other = GOOD.replace("topic: demo", "topic: other").replace("id: demo-", "id: other-")
    bank = load_bank([write_pack(GOOD, "a.yaml"), write_pack(other, "b.yaml")])
    with Store.open() as store:
        queue = study_queue(bank, store, now=NOW)
    assert [q.id for q in queue[:4]] == ["demo-single", "other-single", "demo-text", "other-text"]
    assert [q.difficulty for q in queue] == sorted(q.difficulty for q in queue)


def review_on_schedule(store, question, ratings, start):
    """Review `question` with each rating in turn, each time when it falls due; returns the last review's time."""
    at = start
    for rating in ratings:
        due = record_review(store, question, rating=rating, correct=rating > 1, now=at)
        last, at = at, max(due, at)
    return last


def test_mastery_is_what_would_be_recalled_a_week_from_now(write_pack):
    """Two questions failed and rated Again read 0%, not the ~100% recall FSRS predicts just after any
    review; a question counts once FSRS gives it 90% recall a week ahead, and stops counting as it fades."""
    bank = bank_of(write_pack)
    with Store.open() as store:
        record_review(store, bank.questions["demo-single"], rating=1, correct=False, now=NOW)
        record_review(store, bank.questions["demo-multi"], rating=1, correct=False, now=NOW)
        right_after = compute_stats(bank.outline(), store, now=NOW + timedelta(seconds=10)).topics[0]
        assert (right_after.accuracy, right_after.mastery) == (0.0, 0.0)

        last = review_on_schedule(store, bank.questions["demo-text"], [3, 3, 3], NOW)
        held = compute_stats(bank.outline(), store, now=last).topics[0]
        assert held.mastery == 1 / 6  # stability past a week: counted, and only that one
        # A week's hold means 90% odds on the day a week ahead: at the start of that week it counts,
        # once fewer than 7 days of its stability are left it does not.
        from quizapp.study.schedule import card_from_json

        stability = timedelta(days=card_from_json(store.card_json("demo-text")).stability)
        assert stability > timedelta(days=7)
        just_in = last + stability - timedelta(days=7) - timedelta(hours=1)
        just_out = last + stability - timedelta(days=7) + timedelta(hours=1)
        assert compute_stats(bank.outline(), store, now=just_in).topics[0].mastery == 1 / 6
        assert compute_stats(bank.outline(), store, now=just_out).topics[0].mastery == 0
