"""Schema 2: stable uids on answers and grades, kept interviews, settings; a version-1 file migrates."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from quizapp.study.schema import MIGRATIONS, SCHEMA_VERSION
from quizapp.study.store import InterviewRecord, Store

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def _version1_file(path):
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0])
    conn.execute("INSERT INTO answers (question_id, topic, answered_at, correct, rating) VALUES"
                 " ('q1', 'demo', '2026-01-01T10:00:00+00:00', 1, 3),"
                 " ('q2', 'demo', '2026-01-02T10:00:00+00:00', 0, 1)")
    conn.execute("INSERT INTO cards (question_id, topic, due, card, reviewed_at) VALUES"
                 " ('q1', 'demo', '2026-01-05T10:00:00+00:00', '{}', '2026-01-01T10:00:00+00:00')")
    conn.execute("INSERT INTO grades (exercise_id, graded_at, status, checks_passed, checks_total) VALUES"
                 " ('amp_training', '2026-01-03T10:00:00+00:00', 'pass', 8, 8)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def test_version_1_file_with_rows_migrates(quizapp_home):
    quizapp_home.mkdir(parents=True)
    db = quizapp_home / "progress.sqlite3"
    _version1_file(db)
    with Store.open() as store:
        assert store.schema_version == SCHEMA_VERSION
        answer_uids = [row["uid"] for row in store.answers()]
        grade_uids = [r[0] for r in store.conn.execute("SELECT uid FROM grades")]
        assert [row["question_id"] for row in store.answers()] == ["q1", "q2"]  # rows kept
        assert store.card_json("q1") == "{}"
        assert store.interviews() == [] and store.setting("anything") is None
    uids = answer_uids + grade_uids
    assert len(set(uids)) == 3 and all(len(u) == 32 and int(u, 16) >= 0 for u in uids)


def test_uids_are_unique_and_new_rows_get_one(quizapp_home):
    with Store.open() as store:
        store.record_answer("q1", "demo", rating=3, correct=True, reschedule=lambda old: ("{}", NOW), at=NOW)
        store.record_grade("amp_training", status="pass", checks_passed=1, checks_total=1, at=NOW)
        (answer,) = store.answers()
        (grade_uid,) = [r[0] for r in store.conn.execute("SELECT uid FROM grades")]
        assert len(answer["uid"]) == 32 and len(grade_uid) == 32 and answer["uid"] != grade_uid
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("INSERT INTO answers (uid, question_id, topic, answered_at, rating)"
                               " VALUES (?, 'q2', 'demo', '2026-01-01', 3)", (answer["uid"],))


def test_interviews_are_kept_oldest_first():
    report = {"topics": {"mixed_precision": {"score": 0.5}}, "questions": []}
    with Store.open() as store:
        later = store.record_interview(started_at=NOW + timedelta(days=1), finished_at=NOW + timedelta(days=1, minutes=30),
                                       minutes=30, score=0.75, report=report)
        earlier = store.record_interview(started_at=NOW, finished_at=NOW + timedelta(minutes=5),
                                         minutes=5.0, score=1.0000000000000002, report={})
        kept = store.interviews()
    assert [k.uid for k in kept] == [earlier, later] and earlier != later
    assert kept[1] == InterviewRecord(later, NOW + timedelta(days=1), NOW + timedelta(days=1, minutes=30), 30.0, 0.75, report)
    assert kept[0].score == 1.0 and kept[0].started_at.tzinfo is not None
    with Store.open() as store, pytest.raises(ValueError, match="0 to 1"):
        store.record_interview(started_at=NOW, finished_at=NOW, minutes=5, score=3, report={})


def test_settings_hold_json_values():
    with Store.open() as store:
        assert store.setting("fsrs", "none") == "none"
        store.set_setting("fsrs", {"parameters": [0.1, 0.2]})
        store.set_setting("fsrs", {"parameters": [0.3]})
        assert store.setting("fsrs") == {"parameters": [0.3]}
        store.delete_setting("fsrs")
        assert store.setting("fsrs") is None
