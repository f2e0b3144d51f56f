"""The mock interview in the TUI: setup, the countdown on a fake clock, cards with key points, the
exercise graded by the fake grader, the report card, and interview scores on the stats screen."""

from __future__ import annotations

from datetime import timedelta

from quizapp.bank import load_bank, pack_files
from quizapp.catalog import load_catalog
from quizapp.interview import Interview, make_plan
from quizapp.study.store import Store
from quizapp.tui.screens.interview import InterviewScreen
from quizapp.tui.screens.interview_report import InterviewReportScreen
from quizapp.tui.screens.stats import StatsScreen
from quizapp.tui.widgets.answers import ChoiceAnswer
from quizapp.tui.widgets.keypoints import KeyPointList
from tuihelp import DATA, NOW, SIZE, settle


class FakeClock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


def interview_bank():
    return load_bank(pack_files([DATA / "interview"]))


async def open_interview(pilot, minutes: str = "5") -> InterviewScreen:
    await pilot.press("i")
    await pilot.pause()
    pilot.app.screen.query_one("#minutes").value = minutes
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, InterviewScreen)
    return pilot.app.screen


async def answer_current(pilot, screen: InterviewScreen, clock: FakeClock, *, tick: int) -> None:
    """The card: a written answer and the first `tick` key points; the single: its right choice."""
    q = screen.interview.current
    clock.advance(seconds=30)
    if q.type == "card":
        await pilot.press(*"skipped on inf")
        await pilot.press("ctrl+s")
        await pilot.pause()
        points = screen.query_one(KeyPointList)
        assert points.has_focus
        for _ in range(tick):
            await pilot.press("space", "down")
        await pilot.pause()
        assert f"{tick} of 3 covered" in str(screen.query_one("#key-summary").render())
    else:
        row = screen.query_one(ChoiceAnswer).order.index(q.answer)
        await pilot.press(str(row + 1), "enter")
        await pilot.pause()
    await pilot.press("ctrl+s")
    await pilot.pause()


async def test_a_five_minute_interview_end_to_end(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        plan = screen.interview.plan
        assert plan.exercise.id == "scaled_loop" and plan.exercise_minutes == 2 and len(plan.questions) == 2
        # The clock counts the questions' share and says so, with the exercise's box after it.
        assert "3:00 left for the questions, then 2:00 for the exercise" in str(screen.query_one("#iv-clock").render())
        for _ in plan.questions:
            await answer_current(pilot, screen, clock, tick=2)
        assert screen.interview.phase == "exercise"
        assert (app.context.work_dir / "interview_scaled_loop.py").is_file()
        clock.advance(minutes=4)  # the exercise's time runs out: it is graded as it is
        await screen.tick()
        await settle(pilot)
        assert isinstance(app.screen, InterviewReportScreen)
        card = app.screen.card
        assert [q.seconds for q in card.questions] == [30.0, 30.0]
        assert card.exercise.status == "pass" and card.exercise.passed == 3
        by_id = {q.question_id: q for q in card.questions}
        assert by_id["iv-card"].rating == 2 and by_id["iv-single"].outcome == "right"
    with Store.open() as store:
        assert {r["question_id"] for r in store.answers()} == {"iv-card", "iv-single"}
        (kept,) = store.interviews()
        assert kept.report["exercise"]["status"] == "pass"
        assert store.grades("scaled_loop")  # the grader recorded its attempt


async def test_time_up_for_questions_moves_on_and_grades_early_on_a_key(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock, grader="fail")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        clock.advance(minutes=3, seconds=1)
        await screen.tick()
        await pilot.pause()
        assert screen.interview.phase == "exercise"
        assert "1:59 left for the exercise" in str(screen.query_one("#iv-clock").render())
        await pilot.press("ctrl+g")
        await settle(pilot)
        card = app.screen.card
        assert [q.outcome for q in card.questions] == ["missed", "missed"]
        assert card.exercise.status == "fail" and card.study_next == ["scaling"]
    with Store.open() as store:
        assert store.answers() == [] and len(store.interviews()) == 1


async def test_escape_ends_the_interview_after_asking(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        await open_interview(pilot)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, InterviewReportScreen) and app.screen.card.ended_early
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)
        table = app.screen.query_one("#interview-table")
        assert table.row_count == 1


async def test_bad_minutes_are_refused_in_the_dialog(make_app):
    app = make_app(bank=interview_bank())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#minutes").value = "1"
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, InterviewScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HomeScreen"


def finished_card(make_app_context):
    bank, store, catalog = make_app_context
    clock = FakeClock()
    plan = make_plan(bank, store, catalog, minutes=5, now=NOW, seed=1)
    interview = Interview(plan, bank, store, clock=clock)
    interview.start()
    while (q := interview.current) is not None:
        interview.show()
        clock.advance(seconds=45)
        interview.submit()
        if q.type == "card":
            interview.answer_card("text", covered=[0, 2])
        else:
            interview.answer(0)
    clock.advance(minutes=2)
    interview.exercise_graded({"status": "fail", "message": None, "checks": [
        {"title": "Runs and returns a loss per epoch", "status": "pass", "message": ""},
        {"title": "Backward runs on the scaled loss", "status": "fail",
         "message": "expected backward on loss x 65536, saw backward on the unscaled loss"}]})
    return interview.finish()


def test_report_card_snapshot(snap_compare, make_app):
    app = make_app(bank=interview_bank())

    async def show_card(pilot) -> None:
        context = pilot.app.context
        card = finished_card((context.bank, context.store, load_catalog(DATA / "exercises")))
        await pilot.app.push_screen(InterviewReportScreen(context, card))
        await pilot.pause()

    assert snap_compare(app, run_before=show_card, terminal_size=SIZE)


async def test_review_card_key_points_suggest_the_rating(make_app):
    from quizapp.tui.messages import StudyRequested

    app = make_app(bank=interview_bank())
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(StudyRequested("scaling"))
        await pilot.pause()
        assert app.screen.question.id == "iv-card"
        await pilot.press("enter")  # the model answer and the key points
        await pilot.pause()
        assert app.screen.query_one(KeyPointList).has_focus
        assert app.screen.rating_bar.selected == 1  # nothing ticked yet: Again
        await pilot.press("space", "down", "space")
        await pilot.pause()
        assert app.screen.rating_bar.selected == 2  # 2 of 3: Hard
        await pilot.press("tab", "enter")
        await pilot.pause()
    with Store.open() as store:
        (row,) = [r for r in store.answers() if r["question_id"] == "iv-card"]
        assert row["rating"] == 2 and row["response"] == '{"covered": [0, 1]}'
