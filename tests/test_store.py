"""The progress store: schema and migrations, transactions, two writers, crashes, bad files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from quizapp import paths
from quizapp.bank import Question
from quizapp.study.schedule import preview, record_review
from quizapp.study.schema import SCHEMA_VERSION
from quizapp.study.store import Store, StoreError

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def question(qid="q1", topic="demo") -> Question:
    return Question(id=qid, type="card", difficulty=1, prompt="p", explanation="e", topic=topic,
                    source=Path("x.yaml"), line=1)


def test_creates_database_in_quizapp_home(quizapp_home):
    with Store.open() as store:
        assert store.path == quizapp_home / "progress.sqlite3" == paths.db_path()
        assert store.schema_version == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_review_saves_answer_and_card_together():
    with Store.open() as store:
        due = record_review(store, question(), rating=3, correct=True, response=1, duration_ms=1500, now=NOW)
        rows = store.answers()
        assert len(rows) == 1 and rows[0]["correct"] == 1 and rows[0]["rating"] == 3
        assert json.loads(rows[0]["response"]) == 1 and rows[0]["duration_ms"] == 1500
        card = json.loads(store.card_json("q1"))
        assert datetime.fromisoformat(card["due"]) == due > NOW
        # a second review reads the stored card: a Good on a learning card moves it further out
        due2 = record_review(store, question(), rating=3, correct=True, now=due)
        assert due2 - due > due - NOW


def test_failed_write_rolls_back_the_whole_answer():
    with Store.open() as store:
        def broken(_old):
            raise RuntimeError("scheduler blew up")
        with pytest.raises(RuntimeError):
            store.record_answer("q1", "demo", rating=3, correct=True, reschedule=broken, at=NOW)
        assert store.answer_count() == 0 and store.card_json("q1") is None


def test_preview_matches_what_the_rating_gives():
    shown = preview(None, NOW)
    assert shown[1] < shown[3] < shown[4]
    with Store.open() as store:
        due = record_review(store, question(), rating=4, correct=True, now=NOW)
    assert due - NOW == shown[4]


def test_grades_are_recorded():
    with Store.open() as store:
        store.record_grade("amp_training", status="fail", checks_passed=3, checks_total=8, device="cpu",
                           duration_s=2.5, file_path="a.py", file_hash="ab", report={"status": "fail"})
        store.record_grade("amp_training", status="pass", checks_passed=8, checks_total=8)
        grades = store.grades("amp_training")
    assert [g.status for g in grades] == ["fail", "pass"] and grades[0].checks_passed == 3


def test_corrupt_file_is_reported_and_left_alone(quizapp_home):
    quizapp_home.mkdir(parents=True)
    db = quizapp_home / "progress.sqlite3"
    db.write_bytes(b"this is not a database at all" * 100)
    before = db.read_bytes()
    with pytest.raises(StoreError) as err:
        Store.open()
    assert "corrupt" in str(err.value) and str(db) in str(err.value)
    assert db.read_bytes() == before


def test_damaged_pages_are_reported_and_left_alone(quizapp_home):
    with Store.open() as store:
        for i in range(200):
            record_review(store, question(f"q{i}"), rating=3, correct=True, now=NOW)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = quizapp_home / "progress.sqlite3"
    data = bytearray(db.read_bytes())
    data[4096 * 2: 4096 * 4] = b"\xde\xad" * 4096  # keep the header, wreck two pages
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError) as err:
        Store.open()
    assert "corrupt" in str(err.value)
    assert db.read_bytes() == bytes(data)


def test_newer_schema_is_refused_not_migrated(quizapp_home):
    quizapp_home.mkdir(parents=True)
    db = quizapp_home / "progress.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError) as err:
        Store.open()
    assert "newer quizapp" in str(err.value)
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_migrates_an_old_empty_database(quizapp_home):
    quizapp_home.mkdir(parents=True)
    sqlite3.connect(quizapp_home / "progress.sqlite3").close()  # version 0
    with Store.open() as store:
        assert store.schema_version == SCHEMA_VERSION
        assert {"answers", "cards", "grades"} <= {
            r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


WRITER = textwrap.dedent("""
    import sys
    from datetime import datetime, timezone
    from pathlib import Path
    from quizapp.bank import Question
    from quizapp.study.schedule import record_review
    from quizapp.study.store import Store
    name, count = sys.argv[1], int(sys.argv[2])
    with Store.open() as store:
        for i in range(count):
            q = Question(id=f"{name}-{i}", type="card", difficulty=1, prompt="p", explanation="e",
                         topic=name, source=Path("x"), line=1)
            record_review(store, q, rating=3, correct=None)
            store.record_grade(name, status="pass", checks_passed=1, checks_total=1)
""")


def test_two_processes_writing_at_once_lose_nothing(quizapp_home):
    env = {**os.environ, "QUIZAPP_HOME": str(quizapp_home)}
    count = 300
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, name, str(count)], env=env,
                              stderr=subprocess.PIPE, text=True) for name in ("tui", "grader")]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Store.open() as store:
        assert store.answer_count() == 2 * count
        assert len(store.cards()) == 2 * count
        assert len(store.grades()) == 2 * count


KILLED = textwrap.dedent("""
    import sys, time
    from datetime import datetime, timezone
    from quizapp.study.store import Store, utcnow
    with Store.open() as store:
        for i in range(5):
            store.record_answer(f"q{i}", "t", rating=3, correct=True,
                                reschedule=lambda old: ('{}', utcnow()), at=utcnow())
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.execute("INSERT INTO answers (question_id, topic, answered_at, rating) VALUES ('late', 't', 'x', 3)")
        print("ready", flush=True)
        time.sleep(60)
""")


def test_sigkill_mid_session_loses_only_the_uncommitted_answer(quizapp_home):
    env = {**os.environ, "QUIZAPP_HOME": str(quizapp_home)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    with Store.open() as store:
        ids = [r["question_id"] for r in store.answers()]
    assert ids == [f"q{i}" for i in range(5)]


def hold_exclusive_lock(db):
    """Another connection holding the write lock on a file that is not in WAL mode yet."""
    db.parent.mkdir(parents=True, exist_ok=True)
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    other.execute("BEGIN EXCLUSIVE")
    return other


def test_a_lock_held_a_moment_is_waited_out(quizapp_home):
    import threading

    other = hold_exclusive_lock(quizapp_home / "progress.sqlite3")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    with Store.open() as store:  # "database is locked" at once while switching to WAL: retried
        assert store.schema_version == SCHEMA_VERSION
    other.close()


def test_a_lock_that_stays_is_busy_not_corrupt(quizapp_home, monkeypatch):
    import quizapp.study.store as store_module

    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.5)
    other = hold_exclusive_lock(quizapp_home / "progress.sqlite3")
    with pytest.raises(StoreError) as err:
        Store.open()
    other.execute("COMMIT")
    other.close()
    assert "stayed locked by another process" in str(err.value) and "corrupt" not in str(err.value)
