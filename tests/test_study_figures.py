"""The figures every front end shows: one "due now" (the questions failed checks asked for
included, and named), and what is on its way to mastery (learning, mastered)."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import timedelta

import pytest
from click.testing import CliRunner

from quizapp.bank import load_bank
from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.study.due import due_plan
from quizapp.study.schedule import record_review
from quizapp.study.stats import compute_stats, store_version
from quizapp.study.store import Store, utcnow

PACK = "\n".join(["topic: figs", "title: Figures", "questions:"] + [
    line for n in range(8) for line in (
        f"  - id: figs-{n}", "    type: card", "    difficulty: 1", f"    prompt: Explain figure {n}.",
        "    explanation: The model answer.")]) + "\n"


def run(*args, width: int = 200):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, terminal_width=width)


@pytest.fixture
def studied(write_pack, quizapp_home):
    """figs-0 and figs-1: cards due (answered Good three days ago); figs-2: answered Easy an hour ago,
    its card not due for days; then a failed check asked for figs-2, figs-3 (never answered) and
    figs-0 (its card was due before the check asked). Due now: figs-0, figs-1 by their cards, figs-2
    and figs-3 because the check asked; 2 of the 4 asked for by the check."""
    write_pack(PACK, "figs.yaml", quizapp_home / "questions")
    bank = load_bank()
    now = utcnow()
    with Store.open() as store:
        for qid in ("figs-0", "figs-1"):
            record_review(store, bank.questions[qid], rating=3, correct=None, now=now - timedelta(days=3))
        record_review(store, bank.questions["figs-2"], rating=4, correct=None, now=now - timedelta(hours=1))
        store.record_grade("amp_training", status="fail", checks_passed=2, checks_total=5,
                           at=now - timedelta(minutes=30),
                           report={"status": "fail", "review": ["figs-2", "figs-3", "figs-0"]})
    return bank


def test_stats_and_the_due_plan_count_the_same_questions_due_and_the_same_share_of_checks(studied):
    with Store.open() as store:
        now = utcnow()
        stats = compute_stats(studied.outline(), store, now=now)
        plan = due_plan(store, {q.id: q.topic for q in studied.questions.values()}, load_catalog(), now)
    figs = next(t for t in stats.topics if t.slug == "figs")
    assert (figs.due, figs.asked) == (4, 2)
    assert (stats.due, stats.asked) == tuple(plan.due_now()) == (4, 2)
    assert {q.id for q in stats.scheduled if q.due <= now} == {q.id for q in plan.questions_due()}


def test_quizapp_due_and_quizapp_stats_print_the_same_due_now(studied):
    due = run("due")
    stats = run("stats")
    assert due.exit_code == 0 and stats.exit_code == 0
    assert "Due now: 4 questions (2 asked for by failed checks), 0 exercises" in due.output
    assert "Due now: 4 (2 asked for by failed checks)" in stats.output
    document = json.loads(run("due", "--json").output)
    assert document["due_now"] == {"questions": 4, "asked_by_checks": 2, "exercises": 0}
    assert len([q for q in document["questions"] if q["due"] <= document["now"]]) == 4  # the contract's own list


def test_a_suspended_question_is_in_no_due_count_even_when_a_check_asked_for_it(studied):
    assert run("suspend", "figs-3").exit_code == 0
    assert "Due now: 3 (1 asked for by a failed check)" in run("stats").output
    assert "Due now: 3 questions (1 asked for by a failed check)" in run("due").output


def test_a_day_of_study_shows_learning_beside_a_mastery_of_zero(write_pack, quizapp_home):
    """30 answers, most right, on a first day: nothing is held for a week yet (mastery 0%), and every
    question answered is learning."""
    write_pack(PACK, "figs.yaml", quizapp_home / "questions")
    bank = load_bank()
    now = utcnow()
    with Store.open() as store:
        for n in range(30):
            qid = f"figs-{n % 6}"
            record_review(store, bank.questions[qid], rating=1 if n % 7 == 0 else 3, correct=None,
                          now=now - timedelta(hours=8) + timedelta(minutes=n * 10))
        stats = compute_stats(bank.outline(), store, now=now)
    figs = next(t for t in stats.topics if t.slug == "figs")
    assert figs.mastery == 0 and (figs.learning, figs.mastered) == (6, 0)
    assert (stats.learning, stats.mastered) == (6, 0)
    output = run("stats").output
    assert "On the way: 6 learning, 0 mastered" in output
    row = next(line for line in output.splitlines() if "Figures" in line)
    assert re.search(r"│\s+0%\s+│\s+6\s+│\s+0\s+│$", row), row  # mastery, learning, mastered


def test_a_card_held_for_a_week_counts_as_mastered_not_learning(write_pack, quizapp_home):
    write_pack(PACK, "figs.yaml", quizapp_home / "questions")
    bank = load_bank()
    now = utcnow()
    with Store.open() as store:
        # Easy on a new card: FSRS's first stability is over a week, so it is held a week from now.
        record_review(store, bank.questions["figs-0"], rating=4, correct=None, now=now)
        record_review(store, bank.questions["figs-1"], rating=3, correct=None, now=now)
        stats = compute_stats(bank.outline(), store, now=now)
    figs = next(t for t in stats.topics if t.slug == "figs")
    assert (figs.seen, figs.learning, figs.mastered) == (2, 1, 1)
    assert figs.mastery == pytest.approx(1 / 8)
    assert "On the way: 1 learning, 1 mastered" in run("stats").output


def test_stats_flags_never_cut_or_wrap_an_id(write_pack, quizapp_home):
    long_id = "figs-a-question-id-long-enough-to-wrap-in-a-narrow-table"
    write_pack(PACK + f"  - id: {long_id}\n    type: card\n    difficulty: 1\n    prompt: Why?\n"
               "    explanation: Because.\n", "figs.yaml", quizapp_home / "questions")
    note = "the figure in the explanation looks wrong to me, please check it against the docs"
    assert run("flag", long_id, "--note", note).exit_code == 0
    assert run("suspend", long_id).exit_code == 0
    for width in (80, 100):
        lines = run("stats", "--flags", width=width).output.splitlines()
        rows = [line for line in lines if long_id in line]
        assert len(rows) == 2, "\n".join(lines)  # flagged and suspended, each id whole on one line
        assert not any(long_id[:20] in line and long_id not in line for line in lines)


def test_the_store_version_moves_with_any_write_and_stays_put_for_reads(tmp_path):
    with Store.open(tmp_path / "p.sqlite3") as store:
        before = store_version(store)
        store.cards(), store.answers(), store_version(store)
        assert store_version(store) == before  # reading changes nothing
        store.set_setting("new_per_day", 5)  # a write through this connection
        mine = store_version(store)
        assert mine != before
        other = sqlite3.connect(store.path)  # another process's connection, as the CLI's
        with other:
            other.execute("UPDATE settings SET value = '6' WHERE key = 'new_per_day'")
        other.close()
        assert store_version(store) != mine
