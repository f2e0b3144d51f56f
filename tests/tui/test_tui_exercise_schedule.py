"""Exercises that come back on the schedule, and checks that point at questions, in the app: the home
tiles and today's plan, the exercise screen's due line and fresh file, "review these" under the
results, the exercises list and the stats summary. Grades are recorded at fixed times around the
app's clock (NOW)."""

from __future__ import annotations

import json
from datetime import timedelta

from fsrs import Card
from textual.widgets import Input, Static
from tuihelp import DATA, NOW, SIZE, SMALL, SOLVED, STARTER, ReviewGrader, pack_bank, passed_ten_days_ago, settle

from quizapp.catalog import load_catalog
from quizapp.study.due import exercise_state
from quizapp.study.plan import DEFAULT_CARD_S, DayLoad, HomePlan, about, today_lines
from quizapp.study.schedule import record_review
from quizapp.study.stats import exercise_seconds
from quizapp.study.store import Store
from quizapp.tui.screens.dialogs import PathScreen
from quizapp.tui.screens.exercise import ExerciseScreen
from quizapp.tui.screens.exercises import ExercisesScreen
from quizapp.tui.screens.home import HomeScreen
from quizapp.tui.screens.stats import StatsScreen
from quizapp.tui.widgets.results import GradeResults
from quizapp.tui.widgets.tiles import Tiles


def widget_text(widget) -> str:
    """What a widget shows, line by line, as plain text."""
    return "\n".join("".join(segment.text for segment in widget.render_line(y)).rstrip()
                     for y in range(widget.size.height))


async def test_home_counts_a_due_exercise_and_a_question_a_failed_check_asked_for(make_app, work_dir):
    questions = pack_bank().questions
    with Store.open() as store:
        # Answered Good 3 days ago in 30 s: its card's first learning step is long past, so it is due.
        record_review(store, questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        passed_ten_days_ago(store, work_dir, failed_first=True)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # the plan of a learner with grades is drawn a frame after the tiles
        tiles = app.screen.query_one(Tiles)
        due, new, _, exercises = tiles.figures
        assert due == ("2", "1 by checks")  # sc-single's card, and sc-text that the failed check asked for
        assert new[0] == "6"  # sc-text has no card yet: new as well
        assert exercises[0] == "1 due · 1 passed"
        plan = widget_text(app.screen.query_one("#plan"))
        # 2 cards at the median answer (30 s) and the exercise at the learner's pace: 20 minutes from
        # its first grade to its pass.
        assert "Today: 2 cards (1 from failed checks) and 1 exercise, about 21 min at your pace" in plan
        assert "Next 7 days: Su █2+1  Mo ·" in plan


async def test_the_plan_fits_a_narrow_screen(make_app, work_dir):
    questions = pack_bank().questions
    with Store.open() as store:
        record_review(store, questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        passed_ten_days_ago(store, work_dir, failed_first=True)
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        lines = widget_text(app.screen.query_one("#plan")).splitlines()
        assert lines[0].strip() == "Today: 2 cards and 1 exercise, about 21 min at your pace"  # the short wording
        assert lines[1].strip().startswith("Next 7 days: Su █2+1")


async def test_a_new_learner_sees_nothing_due_and_a_week_of_nothing(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.screen.query_one(Tiles).figures[0] == ("0", "cards")
        plan = widget_text(app.screen.query_one("#plan"))
        assert "Today: nothing due. Press r for new questions." in plan
        assert "Next 7 days: Su ·  Mo ·  Tu ·  We ·  Th ·  Fr ·  Sa ·" in plan


def card_due_in(store: Store, qid: str, topic: str, days: float) -> None:
    """A card for `qid` that comes due `days` after NOW."""
    card = Card(card_id=1, due=NOW + timedelta(days=days))
    store.record_answer(qid, topic, rating=3, correct=True, at=NOW, duration_ms=10_000,
                        reschedule=lambda old: (json.dumps(card.to_dict()), card.due))


async def test_the_week_ahead_counts_each_day(make_app, work_dir):
    """Each card and exercise lands in its local day's bar, the busiest day's bar full; the first day
    is today and holds what is overdue too."""
    with Store.open() as store:
        card_due_in(store, "sc-single", "scaling", -2)  # overdue: today's
        for qid, days in (("sc-multi", 1), ("sc-numeric", 1.1), ("sc-text", 1.2), ("sc-order", 3), ("sc-card", 9)):
            card_due_in(store, qid, "scaling", days)
        passed_ten_days_ago(store, work_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        week = widget_text(app.screen.query_one("#plan")).splitlines()[1].strip()
        assert week == "Next 7 days: Su ▆1+1  Mo █3  Tu ·  We ▃1  Th ·  Fr ·  Sa ·"


def test_the_time_is_said_in_minutes_and_the_guessed_rates_are_named():
    assert about(10) == "about 1 min"
    assert about(25 * 60) == "about 25 min"
    assert about(100 * 60) == "about 1 h 40 min"
    week = [DayLoad(NOW.date() + timedelta(days=n), 3 if n == 0 else 0, 0) for n in range(7)]
    plan = HomePlan(3, 0, 0, week, None, None)
    assert plan.seconds_today() == 3 * DEFAULT_CARD_S
    assert today_lines(plan, 0) == ["Today: 3 cards, about 1 min (a first guess: 20 s a card)"]


async def test_a_due_exercise_says_so_and_c_offers_a_fresh_file_keeping_the_old(make_app, work_dir):
    with Store.open() as store:
        passed_ten_days_ago(store, work_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExerciseScreen)
        line = str(screen.query_one("#file-line", Static).render())
        assert "Your file: ./scaled_loop.py" in line
        assert "Due for review: solve it again from a fresh starter (c writes ./scaled_loop_2.py)." in line
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, PathScreen)
        assert app.screen.query_one(Input).value == "./scaled_loop_2.py"
        assert "./scaled_loop.py is kept" in str(app.screen.query_one(Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert (work_dir / "scaled_loop_2.py").read_text() == STARTER
        assert (work_dir / "scaled_loop.py").read_text() == SOLVED  # the old solution is kept
        line = str(screen.query_one("#file-line", Static).render())
        assert "Your file: ./scaled_loop_2.py" in line and "Due for review: solve it again in this file" in line
    # The next start opens the fresh file, not the old one.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        assert "Your file: ./scaled_loop_2.py" in str(app.screen.query_one("#file-line", Static).render())


async def test_an_exercise_passed_lately_says_when_it_comes_back(make_app, work_dir):
    path = work_dir / "scaled_loop.py"
    path.write_text(SOLVED)
    with Store.open() as store:
        store.record_grade("scaled_loop", status="pass", checks_passed=3, checks_total=3, file_path=str(path),
                           file_hash="solved", at=NOW - timedelta(hours=1))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        status = str(app.screen.query_one("#exercises").get_cell("scaled_loop", "status"))
        assert status.startswith("✔ passed · due in ") and status.endswith("d")
        await pilot.press("enter")
        await pilot.pause()
        line = str(app.screen.query_one("#file-line", Static).render())
        assert "Comes back for review in" in line and "fresh starter" not in line
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one(Input).value == "./scaled_loop.py"  # not due: the usual file


async def test_the_exercises_list_says_due(make_app, work_dir):
    with Store.open() as store:
        passed_ten_days_ago(store, work_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ExercisesScreen)
        assert str(app.screen.query_one("#exercises").get_cell("scaled_loop", "status")) == "✔ passed · due"


async def test_the_results_list_the_questions_to_review_with_their_titles(make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.context.grader = ReviewGrader(["sc-single", "gone-from-the-bank"])
        await pilot.press("x", "enter", "g")
        await settle(pilot)
        review = app.screen.query_one(GradeResults).query_one("#grade-review", Static)
        assert review.display
        text = str(review.render())
        assert text.splitlines() == [
            "Review these (due now, first in your next review):",
            "  • Which format needs **loss scaling** in mixed-precision training?  (sc-single)",
            "Not in your question bank, skipped: gone-from-the-bank",
        ]
        app.context.grader = ReviewGrader([])
        await pilot.press("g")  # a grade without failed checks' questions: the list goes
        await settle(pilot)
        assert not review.display


async def test_the_stats_summary_counts_due_exercises_and_keeps_a_retired_ones_history(make_app, work_dir):
    questions = pack_bank().questions
    with Store.open() as store:
        record_review(store, questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        passed_ten_days_ago(store, work_dir, failed_first=True)
        store.record_grade("old_exercise", status="pass", checks_passed=1, checks_total=1,
                           at=NOW - timedelta(days=40))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)
        summary = str(app.screen.query_one("#stats-summary", Static).render())
        assert "Exercises due 1" in summary
        assert "Your pace (medians): 30 s a card, 20 min an exercise from first grade to pass" in summary
        assert "Kept, not scheduled: the grade history of old_exercise" in summary


async def test_home_redraws_the_plan_when_a_grade_makes_questions_due(make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.screen.query_one(Tiles).figures[0] == ("0", "cards")
        with Store.open() as store:  # a grade from the command line while the app is open
            store.record_grade("scaled_loop", status="fail", checks_passed=2, checks_total=3,
                               at=NOW - timedelta(minutes=5), report={"review": ["sc-single", "sc-multi"]})
        await pilot.press("x", "escape")  # to the exercises and back: home reads the store again
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert app.screen.query_one(Tiles).figures[0] == ("2", "2 by checks")
        assert "Today: 2 cards (2 from failed checks), about 1 min (a first guess: 20 s a card)" in widget_text(
            app.screen.query_one("#plan"))


def test_the_exercise_pace_leaves_breaks_out_and_counts_each_passed_round(work_dir):
    """Each passed review is a round, from the first grade (or hint) after the review before it to the
    pass, without the gaps over half an hour; the pace is the median round."""
    exercise = load_catalog(DATA / "exercises")["scaled_loop"]
    start = NOW - timedelta(days=30)
    with Store.open() as store:
        store.record_exercise_event("scaled_loop", "hint", at=start)
        grades = [(start + timedelta(minutes=10), "fail"), (start + timedelta(days=1), "fail"),  # a night between
                  (start + timedelta(days=1, minutes=15), "pass"),  # the first pass: 10 + 15 minutes
                  (NOW - timedelta(days=1), "fail"),  # due by then: a review, Again; due again a day later
                  (NOW - timedelta(minutes=6), "fail"), (NOW, "pass")]  # the next review: 6 minutes
        for n, (at, status) in enumerate(grades):
            store.record_grade("scaled_loop", status=status, checks_passed=1, checks_total=3, file_hash=str(n), at=at)
        state = exercise_state(store, exercise)
        assert [(r.at, r.passed) for r in state.reviews] == [(grades[2][0], True), (grades[3][0], False), (NOW, True)]
        seconds = exercise_seconds([state], store.grade_events(), store.exercise_events())
    assert seconds == (25 * 60 + 6 * 60) / 2
