"""The stats screen and a session's summary: the same "due now" as home, learning beside mastery,
a pace measured or not said, and the interview chart telling interviews of one day apart."""

from __future__ import annotations

import io
from datetime import datetime, timedelta

from rich.console import Console
from textual.widgets import DataTable, Static
from tuihelp import NOW, SIZE, SMALL, pack_bank, passed_ten_days_ago, settle

from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.tui.messages import StudyRequested
from quizapp.tui.screens.home import HomeScreen
from quizapp.tui.screens.stats import StatsScreen
from quizapp.tui.screens.summary import SummaryScreen
from quizapp.tui.widgets.answers import ChoiceAnswer
from quizapp.tui.widgets.interviews import score_ticks
from quizapp.tui.widgets.tiles import Tiles


def a_card_due_and_a_question_a_check_asked_for(work_dir) -> None:
    """sc-single: its card due (answered 3 days ago); sc-text: never answered, asked for by the
    failed check of an exercise passed ten days ago."""
    with Store.open() as store:
        record_review(store, pack_bank().questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        passed_ten_days_ago(store, work_dir, failed_first=True)


def summary_text(app) -> str:
    return str(app.screen.query_one("#stats-summary", Static).render())


async def test_home_the_stats_screen_and_a_session_summary_say_the_same_due_now(make_app, work_dir):
    a_card_due_and_a_question_a_check_asked_for(work_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.query_one(Tiles).figures[0] == ("2", "1 by checks")
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)
        assert "Due now 2 (1 asked for by a failed check)" in summary_text(app)
        table = app.screen.query_one("#topic-table", DataTable)
        assert table.get_cell("scaling", "due") == "2"  # the topic's due counts the one asked for too
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        app.post_message(StudyRequested("lora"))  # one question, answered right: due again in minutes
        await settle(pilot)
        right = app.screen.query_one(ChoiceAnswer).order.index(app.screen.question.answer) + 1  # shown shuffled
        await pilot.press(str(right), "enter")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        for static in app.screen.query(Static):
            console.print(static.content)
        assert "Now       2 due (1 asked for by a failed check) · " in console.export_text()


async def test_the_stats_screen_shows_learning_and_mastered_beside_mastery(make_app):
    questions = pack_bank().questions
    with Store.open() as store:
        record_review(store, questions["sc-single"], rating=4, correct=True, now=NOW)  # held past a week
        for qid in ("sc-multi", "sc-numeric"):
            record_review(store, questions[qid], rating=3, correct=True, now=NOW - timedelta(hours=2))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", "t")
        await settle(pilot)
        assert "Learning 2   Mastered 1" in summary_text(app)
        table = app.screen.query_one("#topic-table", DataTable)
        assert (table.get_cell("scaling", "learning").plain, table.get_cell("scaling", "mastered").plain) == ("2", "1")
        assert (table.get_cell("lora", "learning").plain, table.get_cell("lora", "mastered").plain) == ("0", "0")
        meaning = app.screen.query_one("#mastery-meaning", Static)
        assert "Learning: questions you have answered" in str(meaning.render())
        # The caption under the table is on screen, above the footer (the pane used to run past it).
        assert meaning.region.height >= 2 and meaning.region.bottom <= app.screen.region.bottom - 1


async def test_a_first_try_pass_leaves_the_exercise_pace_unmeasured_not_zero(make_app, work_dir):
    with Store.open() as store:
        record_review(store, pack_bank().questions["sc-single"], rating=3, correct=True, now=NOW - timedelta(days=3),
                      duration_ms=30_000)
        passed_ten_days_ago(store, work_dir)  # one grade, a pass: no time between grades to measure
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("s")
        await settle(pilot)
        summary = summary_text(app)
        assert "0 s an exercise" not in summary
        assert "Your pace (medians): 30 s a card, — an exercise (first-try passes leave no time to measure)" in summary


def test_two_interviews_on_one_day_are_labelled_apart_and_each_is_a_point():
    day = NOW.replace(hour=9)
    stamps = [day - timedelta(days=2), day, day + timedelta(hours=3)]
    ticks, labels = score_ticks(stamps)
    assert ticks == [1, 2, 3]  # one point per interview, in order
    assert labels == ["02-27", "03-01 09:00", "03-01 12:00"]
    ticks, labels = score_ticks([day - timedelta(days=n) for n in range(3, -1, -1)])
    assert labels == ["02-26", "02-27", "02-28", "03-01"]  # days apart: the day is enough
    many = [datetime(2026, 3, 1, 8) + timedelta(hours=n) for n in range(12)]
    ticks, labels = score_ticks(many)
    assert ticks[-1] == 12 and len(ticks) <= 3 and len(set(labels)) == len(labels)


async def test_the_interview_chart_draws_a_dot_on_each_interview(make_app):
    with Store.open() as store:
        for hours, score in ((9, 0.4), (12, 0.8)):
            at = NOW.replace(hour=hours)
            store.record_interview(started_at=at, finished_at=at + timedelta(minutes=10), minutes=10, score=score,
                                   report={"questions": [], "study_next": []})
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", "i")
        await settle(pilot)
        chart = app.screen.query_one("#interview-chart")
        lines = ["".join(segment.text for segment in chart.render_line(y)) for y in range(chart.size.height)]
        dots = [(y, line.index("●")) for y, line in enumerate(lines) if "●" in line]
        assert len(dots) == 2 and dots[0][0] != dots[1][0], "\n".join(lines)  # two heights: 40% and 80%
        assert any("03-01 09:00" in line and "03-01 12:00" in line for line in lines)
