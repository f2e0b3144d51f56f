"""How each screen looks, at a fixed size, on the test pack with a fixed clock.

Update after an intended change with `pytest tests/tui --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

from datetime import timedelta

from tuihelp import NOW, SIZE, SMALL, STARTER, ReviewGrader, pack_bank, passed_ten_days_ago, settle

from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.tui.messages import StudyRequested


def some_progress() -> None:
    questions = pack_bank().questions
    with Store.open() as store:
        record_review(store, questions["sc-single"], rating=3, correct=True, now=NOW)
        record_review(store, questions["sc-multi"], rating=1, correct=False, now=NOW)
        store.record_grade("scaled_loop", status="fail", checks_passed=2, checks_total=3, device="cpu",
                           duration_s=1.5, at=NOW)


def test_home(snap_compare, make_app):
    app = make_app()
    some_progress()
    assert snap_compare(app, terminal_size=SIZE)


def a_plan(work_dir) -> None:
    """Timed answers, a card due, a passed exercise due again, and a question its failed check asked for."""
    questions = pack_bank().questions
    with Store.open() as store:
        record_review(store, questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        record_review(store, questions["sc-multi"], rating=3, correct=True, now=NOW - timedelta(hours=1),
                      duration_ms=50_000)
        # Easy on a new card: due 8 days later (FSRS's defaults), on the Thursday after NOW.
        record_review(store, questions["sc-numeric"], rating=4, correct=True, now=NOW - timedelta(days=4),
                      duration_ms=20_000)
        passed_ten_days_ago(store, work_dir, failed_first=True)


def test_home_with_a_plan(snap_compare, make_app, work_dir):
    a_plan(work_dir)

    async def drawn(pilot) -> None:
        await settle(pilot)  # the plan of a learner with grades comes a frame after the tiles

    assert snap_compare(make_app(), run_before=drawn, terminal_size=SIZE)


def test_home_small(snap_compare, make_app):
    assert snap_compare(make_app(), terminal_size=SMALL)


def test_home_light(snap_compare, make_app):
    assert snap_compare(make_app(theme="textual-light"), terminal_size=SMALL)


def test_topic_picker(snap_compare, make_app):
    assert snap_compare(make_app(), press=["t"], terminal_size=SIZE)


def study(topic: str | None = "scaling"):
    async def run_before(pilot) -> None:
        pilot.app.post_message(StudyRequested(topic))
        await pilot.pause()

    return run_before


def test_quiz_question(snap_compare, make_app):
    assert snap_compare(make_app(), run_before=study(), press=["down"], terminal_size=SIZE)


def test_quiz_feedback(snap_compare, make_app):
    assert snap_compare(make_app(), run_before=study(), press=["1", "enter"], terminal_size=SIZE)


def test_quiz_feedback_small(snap_compare, make_app):
    assert snap_compare(make_app(), run_before=study(), press=["2", "enter"], terminal_size=SMALL)


def test_quiz_order_question(snap_compare, make_app):
    async def to_order(pilot) -> None:
        await study()(pilot)
        while pilot.app.screen.question.type != "order":
            await pilot.app.screen.next_question()

    assert snap_compare(make_app(), run_before=to_order, press=["down", "shift+up"], terminal_size=SIZE)


def test_session_summary(snap_compare, make_app):
    # Wrong and rated Again, so the question comes back; right the second time.
    assert snap_compare(make_app(), run_before=study("lora"), press=["2", "enter", "enter", "3", "enter", "enter"],
                        terminal_size=SIZE)


def test_exercises(snap_compare, make_app):
    app = make_app()
    some_progress()
    assert snap_compare(app, press=["x"], terminal_size=SIZE)


def test_exercise_statement_with_a_hint(snap_compare, make_app):
    assert snap_compare(make_app(), press=["x", "enter", "h"], terminal_size=SMALL)


def test_exercise_results_with_curves(snap_compare, make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)

    async def graded(pilot) -> None:
        await pilot.press("x", "enter", "g")
        await settle(pilot)

    assert snap_compare(make_app("fail"), run_before=graded, terminal_size=SIZE)


def test_exercise_due_with_questions_to_review(snap_compare, make_app, work_dir):
    a_plan(work_dir)

    async def graded(pilot) -> None:
        pilot.app.context.grader = ReviewGrader(["sc-single", "gone-from-the-bank"])
        await pilot.press("x", "enter", "g")
        await settle(pilot)

    assert snap_compare(make_app(), run_before=graded, terminal_size=SIZE)


def test_editor(snap_compare, make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    assert snap_compare(make_app(), press=["x", "enter", "i"], terminal_size=SMALL)


def test_stats(snap_compare, make_app):
    app = make_app()
    some_progress()
    assert snap_compare(app, press=["s"], terminal_size=SIZE)


def test_help(snap_compare, make_app):
    assert snap_compare(make_app(), press=["question_mark"], terminal_size=SIZE)


def test_store_problem(snap_compare, make_app, quizapp_home, monkeypatch):
    quizapp_home.mkdir(parents=True)
    (quizapp_home / "progress.sqlite3").write_bytes(b"not a database")
    monkeypatch.chdir(quizapp_home)  # the path on screen is then short and the same on every machine
    assert snap_compare(make_app(), terminal_size=SMALL)
