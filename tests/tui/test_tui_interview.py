"""The mock interview in the TUI: setup, the countdown on a fake clock, cards with key points, the
exercise's starter file where the learner says, graded by the fake grader, the report card, and
interview scores on the stats screen."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from rich.console import Console
from textual.widgets import Button, Input, Static, TextArea
from tuihelp import DATA, NOW, SIZE, SMALL, pack_bank, settle

from quizapp.bank import load_bank, pack_files
from quizapp.catalog import load_catalog
from quizapp.interview import Interview, make_plan
from quizapp.study.store import Store
from quizapp.tui.screens.dialogs import ConfirmScreen, PathScreen
from quizapp.tui.screens.interview import InterviewScreen
from quizapp.tui.screens.interview_report import InterviewReportScreen
from quizapp.tui.screens.stats import StatsScreen
from quizapp.tui.widgets.answers import ChoiceAnswer
from quizapp.tui.widgets.keypoints import KeyPointList


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


async def accept_starter_path(pilot, offered: str) -> None:
    """The exercise asks where its starter goes before writing anything; Enter takes what it offers."""
    assert isinstance(pilot.app.screen, PathScreen)
    assert pilot.app.screen.query_one("#path", Input).value == offered
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, InterviewScreen)


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
        await accept_starter_path(pilot, "./interview_scaled_loop.py")
        assert (app.context.work_dir / "interview_scaled_loop.py").is_file()
        assert "your file: ./interview_scaled_loop.py" in str(screen.query_one("#iv-file-line").render())
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
        await accept_starter_path(pilot, "./interview_scaled_loop.py")
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


# -- what the setup dialog promises --------------------------------------------------------


def setup_plan_text(app) -> str:
    return " ".join(str(app.screen.query_one("#setup-plan").render()).split())


async def test_the_setup_dialog_says_whether_an_exercise_ends_the_interview(make_app):
    app = make_app(bank=interview_bank())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert setup_plan_text(app) == "18 minutes of questions, then a coding exercise with a 12-minute box."
        app.screen.query_one("#minutes").value = "3"
        await pilot.pause()
        assert setup_plan_text(app) == ("Questions only, no coding exercise (from 5 minutes on, the interview "
                                        "ends with a coding exercise).")
        await pilot.press("enter")
        await pilot.pause()
        plan = app.screen.interview.plan
        assert plan.exercise is None and plan.exercise_minutes == 0 and len(plan.questions) == 2
        await pilot.press("escape", "y")
        await settle(pilot)
        await pilot.press("escape")  # the report card, back home
        await pilot.pause()
        screen = await open_interview(pilot, "5")
        assert screen.interview.plan.exercise.id == "scaled_loop" and screen.interview.plan.exercise_minutes == 2


async def test_topics_without_an_exercise_are_said_to_have_none(make_app):
    app = make_app(bank=pack_bank())  # lora and scaling; the one exercise is in scaling
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await pilot.pause()
        app.screen.query_one("#setup-topics").select("lora")
        await pilot.pause()
        assert setup_plan_text(app) == "Questions only, no coding exercise (none of these topics has one)."
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.interview.plan.exercise is None


async def test_the_setup_dialog_keeps_its_buttons_on_a_small_terminal(make_app, tmp_path):
    packs = tmp_path / "many"
    packs.mkdir()
    for n in range(15):
        (packs / f"t{n}.yaml").write_text(
            f"topic: t{n}\ntitle: Topic number {n}\nquestions:\n  - id: t{n}-q\n    type: card\n"
            "    difficulty: 1\n    prompt: Say.\n    explanation: It.\n")
    app = make_app(bank=load_bank(pack_files([packs])))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen.query_one("#interview-setup")
        assert dialog.content_region.contains_region(app.screen.query_one("#start", Button).region)
        assert app.screen.query_one("#setup-topics").outer_size.height >= 3


# -- the starter file ----------------------------------------------------------------------


async def answer_all(pilot, screen, clock) -> None:
    for _ in screen.interview.plan.questions:
        await answer_current(pilot, screen, clock, tick=2)
    assert screen.interview.phase == "exercise"


async def test_the_starter_file_is_written_only_where_the_learner_says(make_app, work_dir):
    (work_dir / "interview_scaled_loop.py").write_text("mine")
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        await answer_all(pilot, screen, clock)
        # Asked first, offered a name no file has; nothing is written before the answer.
        assert isinstance(app.screen, PathScreen)
        assert app.screen.query_one("#path", Input).value == "./interview_scaled_loop-2.py"
        assert sorted(p.name for p in work_dir.iterdir()) == ["interview_scaled_loop.py"]
        # Their own file: asked before it is replaced; "no" asks for another path.
        app.screen.query_one("#path", Input).value = "interview_scaled_loop.py"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, PathScreen)
        await pilot.press("escape")  # not now
        await pilot.pause()
        assert app.screen is screen and screen.exercise_path is None
        assert "not written yet (ctrl+n)" in str(screen.query_one("#iv-file-line").render())
        assert (work_dir / "interview_scaled_loop.py").read_text() == "mine"
        await pilot.press("ctrl+n")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = "sol/here.py"
        await pilot.press("enter")
        await pilot.pause()
        written = work_dir / "sol" / "here.py"
        assert written.read_text() == (DATA / "exercises" / "scaled_loop" / "starter.py").read_text()
        assert "your file: ./sol/here.py" in str(screen.query_one("#iv-file-line").render())
        assert (work_dir / "interview_scaled_loop.py").read_text() == "mine"
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert app.screen.card.exercise.status == "pass"


async def test_replacing_a_file_is_the_learners_choice(make_app, work_dir):
    (work_dir / "interview_scaled_loop.py").write_text("mine")
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        await answer_all(pilot, screen, clock)
        app.screen.query_one("#path", Input).value = "interview_scaled_loop.py"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert screen.exercise_path == work_dir / "interview_scaled_loop.py"
        assert (work_dir / "interview_scaled_loop.py").read_text().startswith("# quizapp: exercise=scaled_loop")


async def test_time_up_without_a_starter_file_ends_the_interview(make_app, work_dir):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        await answer_all(pilot, screen, clock)
        clock.advance(minutes=5)  # the path dialog is still open when the time runs out
        await screen.tick()
        await settle(pilot)
        assert isinstance(app.screen, InterviewReportScreen)
        assert app.screen.card.exercise.status == "error"
        assert app.screen.card.exercise.message == "time was up before a starter file was written"
    assert list(work_dir.iterdir()) == []


# -- the written answer beside the key points ----------------------------------------------

LONG_CARD = """topic: scaling
title: Loss scaling
questions:
  - id: long-card
    type: card
    difficulty: 1
    prompt: Walk through how you would debug a loss that turns NaN late in training.
    explanation: |
{explanation}
    key_points:
      - reproduce from the last checkpoint
      - read the gradient norm history
      - check the batch for bad values
      - find the first non-finite tensor with hooks
"""


@pytest.mark.parametrize("size", [SIZE, SMALL])
async def test_the_written_answer_is_shown_beside_the_key_points(make_app, tmp_path, size):
    # A model answer far longer than the screen: the answer and the key points still share it.
    explanation = "\n".join(f"      {n}. A step of the model answer, long enough to wrap on a small screen." for n in range(40))
    (tmp_path / "long").mkdir()
    (tmp_path / "long" / "long.yaml").write_text(LONG_CARD.format(explanation=explanation))
    app = make_app(bank=load_bank(pack_files([tmp_path / "long"])))
    async with app.run_test(size=size) as pilot:
        screen = await open_interview(pilot, "3")
        await pilot.press(*"reproduce it, then hooks")
        await pilot.press("ctrl+s")
        await settle(pilot)
        pane = screen.query_one("#iv-pane")
        answer = screen.query_one("#iv-your-answer")
        points = screen.query_one(KeyPointList)
        assert "reproduce it, then hooks" in str(answer.query_one("Static").render())
        assert not screen.query_one("#iv-text", TextArea).display  # shown once, beside the points
        assert answer.region.bottom <= points.region.y
        for widget in (answer, points, screen.query_one("#key-summary")):
            assert pane.region.contains_region(widget.region), widget
        await pilot.press("space")
        await pilot.pause()
        assert pane.region.contains_region(answer.region)


async def test_a_short_model_answer_is_shown_from_its_top_with_your_answer(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        while screen.interview.current.type != "card":
            await answer_current(pilot, screen, clock, tick=0)
        await pilot.press(*"skipped on inf")
        await pilot.press("ctrl+s")
        await settle(pilot)
        pane = screen.query_one("#iv-pane")
        for selector in ("#verdict", "#iv-your-answer", "#key-points", "#key-summary"):
            assert pane.region.contains_region(screen.query_one(selector).region), selector


async def test_enter_on_the_key_points_saves_the_ticks_and_goes_on(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_interview(pilot)
        while screen.interview.current.type != "card":
            await answer_current(pilot, screen, clock, tick=0)
        await pilot.press(*"skipped on inf", "ctrl+s")
        await pilot.pause()
        await pilot.press("space", "down", "space", "enter")
        await pilot.pause()
        (card,) = [r for r in screen.interview.results if r.type == "card"]
        assert card.covered == 2 and card.points == 3


class RecordingGrader:
    """Stands in for the app's grader: the interview must warm it up and grade through it."""

    def __init__(self) -> None:
        self.warmed, self.graded = 0, []

    def warm_up(self) -> None:
        self.warmed += 1

    async def grade(self, path, exercise, post, *, token=None) -> None:
        from quizapp.grading.result import CheckResult, GradeReport
        from quizapp.tui.grading import CheckFinished, GradeFinished, GradeStarted

        self.graded.append((path.name, exercise.id))
        check = CheckResult("scaled", "Scales the loss", "fail", "expected 2, saw 1")
        post(GradeStarted("cpu", "2.13", [(check.id, check.title)], token))
        post(CheckFinished(check, token))
        post(GradeFinished(GradeReport(exercise.id, str(path), "fail", None, "cpu", "2.13", 0.5, [check]), token))


async def test_the_interview_grades_through_the_apps_one_grader(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        grader = app.context.grader = RecordingGrader()
        screen = await open_interview(pilot)
        clock.advance(minutes=3, seconds=1)
        await screen.tick()
        await pilot.pause()
        assert grader.warmed == 1  # torch starts loading while the statement is read
        await accept_starter_path(pilot, "./interview_scaled_loop.py")
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert grader.graded == [("interview_scaled_loop.py", "scaled_loop")]
        card = app.screen.card
        assert card.exercise.status == "fail"
        assert [(c.title, c.status, c.message) for c in card.exercise.checks] == [
            ("Scales the loss", "fail", "expected 2, saw 1")]


async def test_the_report_screen_shows_a_topics_questions_and_exercise_apart_from_the_combined(make_app):
    app = make_app(bank=interview_bank())
    async with app.run_test(size=SIZE) as pilot:
        context = app.context
        card = finished_card((context.bank, context.store, load_catalog(DATA / "exercises")))
        await app.push_screen(InterviewReportScreen(context, card))
        await pilot.pause()
        console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
        console.print(app.screen.query_one("#iv-topics", Static).content)
        table = console.export_text()
    topic = next(t for t in card.topics if t.exercise is not None)
    header = next(line for line in table.splitlines() if line.startswith("┃"))
    assert [cell.strip() for cell in header.strip("┃ ").split("┃")] == [
        "topic", "questions", "right", "answered", "exercise", "combined"]
    row = next(line for line in table.splitlines() if topic.title in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells[1] == f"{topic.question_score:.0%}" and cells[4] == "1/2 checks 50%" and cells[5] == f"{topic.score:.0%}"
    assert topic.question_score != topic.score  # the exercise moved the combined: the parts show by how much


class UnsavedGrader:
    """Stands in for the app's grader when the store refuses the grade's write: the report comes, then
    the notice that it was not saved (as the warm grader posts them)."""

    def warm_up(self) -> None:
        pass

    async def grade(self, path, exercise, post, *, token=None) -> None:
        from quizapp.grading.result import CheckResult, GradeReport
        from quizapp.tui.grading import CheckFinished, GradeFinished, GradeNotSaved, GradeStarted

        check = CheckResult("scaled", "Scales the loss", "pass")
        post(GradeStarted("cpu", "2.13", [(check.id, check.title)], token))
        post(CheckFinished(check, token))
        post(GradeFinished(GradeReport(exercise.id, str(path), "pass", None, "cpu", "2.13", 0.5, [check]), token))
        post(GradeNotSaved("database is locked", token))


async def test_a_grade_that_could_not_be_saved_is_said_in_the_interview(make_app):
    clock = FakeClock()
    app = make_app(bank=interview_bank(), now=clock)
    async with app.run_test(size=SIZE) as pilot:
        app.context.grader = UnsavedGrader()
        screen = await open_interview(pilot)
        clock.advance(minutes=3, seconds=1)
        await screen.tick()
        await pilot.pause()
        await accept_starter_path(pilot, "./interview_scaled_loop.py")
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert app.screen.card.exercise.status == "pass"  # the interview counts the grade all the same
        assert any("The grade was not saved: database is locked" in str(n.message) for n in app._notifications)


async def test_a_number_with_a_unit_is_asked_again_not_saved_as_wrong(make_app):
    """As in the quiz, `review` and the command-line interview: "1 GiB" is no answer yet."""
    from quizapp.interview.plan import Plan

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        context = app.context
        question = context.bank.questions["sc-numeric"]
        plan = Plan(minutes=3, questions=(question,), exercise=None, exercise_minutes=0.0)
        screen = InterviewScreen(context, Interview(plan, context.bank, context.store, clock=context.now))
        await app.push_screen(screen)
        await pilot.pause()
        typed = screen.query_one("#answer", Input)
        typed.value = "1 GiB"
        await pilot.press("enter")
        await pilot.pause()
        assert any("without 'GiB'" in str(n.message) for n in app._notifications)
        assert not screen.revealed and not typed.disabled and screen.interview.current is question
        assert context.store.answers() == []
        typed.value = "65504"
        await pilot.press("enter", "ctrl+s")
        await settle(pilot)
        assert [(a["question_id"], a["correct"]) for a in context.store.answers()] == [("sc-numeric", 1)]
