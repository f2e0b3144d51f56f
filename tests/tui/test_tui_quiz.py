"""Quiz flows: answer every type of question with the keyboard and find each answer in the store."""

from __future__ import annotations

import json

import pytest
from rich.console import Console
from tuihelp import SIZE

from quizapp.study.schedule import format_interval, preview
from quizapp.study.store import Store
from quizapp.tui.screens.quiz import QuizScreen
from quizapp.tui.screens.summary import SummaryScreen
from quizapp.tui.widgets.answers import ChoiceAnswer, OrderAnswer
from quizapp.tui.widgets.rating import RatingBar


def stored_answers():
    with Store.open() as store:
        return {row["question_id"]: row for row in store.answers()}


def row_key(screen: QuizScreen, index: int) -> str:
    """The number key of the row that shows choice `index` (choices are shown shuffled)."""
    return str(screen.query_one(ChoiceAnswer).order.index(index) + 1)


async def arrange(pilot, widget: OrderAnswer) -> None:
    """Put the items in their right order with the keyboard only: ↑↓ to the item, shift+↑ to lift it."""
    for target in range(len(widget.arrangement)):
        here = widget.arrangement.index(target)
        while widget.cursor != here:
            await pilot.press("down" if widget.cursor < here else "up")
        for _ in range(here - target):
            await pilot.press("shift+up")


async def answer_right(pilot, screen: QuizScreen) -> None:
    q = screen.question
    if q.type == "single":
        await pilot.press(row_key(screen, q.answer))
    elif q.type == "multi":
        await pilot.press(*(row_key(screen, i) for i in q.answer))
    elif q.type == "numeric":
        await pilot.press(*"65,504")
    elif q.type == "text":
        await pilot.press(*q.answer[1])
    elif q.type == "order":
        await arrange(pilot, screen.query_one(OrderAnswer))
    await pilot.press("enter")
    await pilot.pause()


async def test_every_type_answered_by_keyboard_is_stored(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.press("down", "enter")  # the second topic in the picker: Loss scaling
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QuizScreen)
        seen = []
        while isinstance(app.screen, QuizScreen):
            q = screen.question
            seen.append(q.type)
            await answer_right(pilot, screen)
            bar = screen.query_one(RatingBar)
            assert bar.selected == 3  # right answers and cards suggest Good
            await pilot.press("enter")
            await pilot.pause()
        assert sorted(seen) == sorted(["single", "multi", "numeric", "text", "order", "card"])
        assert isinstance(app.screen, SummaryScreen)
    rows = stored_answers()
    assert {qid: (row["correct"], row["rating"]) for qid, row in rows.items()} == {
        "sc-single": (1, 3), "sc-multi": (1, 3), "sc-numeric": (1, 3), "sc-text": (1, 3),
        "sc-order": (1, 3), "sc-card": (None, 3),
    }
    assert json.loads(rows["sc-single"]["response"]) == 1
    assert json.loads(rows["sc-multi"]["response"]) == [0, 1, 3]
    assert json.loads(rows["sc-numeric"]["response"]) == "65,504"
    assert json.loads(rows["sc-text"]["response"]) == "bf16"
    assert json.loads(rows["sc-order"]["response"]) == [0, 1, 2, 3, 4]
    assert json.loads(rows["sc-card"]["response"]) is None


async def test_wrong_answer_suggests_again_and_the_rating_can_change(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        assert screen.question.id == "sc-single"
        await pilot.press(row_key(screen, 0), "enter")  # bfloat16: wrong
        await pilot.pause()
        bar = screen.query_one(RatingBar)
        assert bar.selected == 1
        assert "The answer: float16" in str(screen.query_one("#verdict").render())
        await pilot.press("right", "enter")
        await pilot.pause()
        assert screen.question.id != "sc-single"
    row = stored_answers()["sc-single"]
    assert (row["correct"], row["rating"], json.loads(row["response"])) == (0, 2, 0)


async def test_rating_buttons_show_the_interval_each_rating_gives(make_app):
    from tuihelp import NOW

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", "2", "enter")
        await pilot.pause()
        labels = [str(button.label) for button in app.screen.query("RatingBar Button")]
    intervals = preview(None, NOW)
    assert labels == [f"{r} {name} {format_interval(intervals[r])}"
                      for r, name in ((1, "Again"), (2, "Hard"), (3, "Good"), (4, "Easy"))]


async def test_number_key_rates_at_once_and_empty_answers_are_refused(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", "enter")  # nothing picked: refused, nothing stored
        await pilot.pause()
        screen = app.screen
        assert screen.pending is None and screen.question.id == "sc-single"
        await pilot.press("2", "enter", "4")
        await pilot.pause()
        assert screen.question.id != "sc-single"
    assert stored_answers()["sc-single"]["rating"] == 4


async def test_a_card_reveals_the_model_answer_and_is_self_rated(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(QuizScreen(app.context, [app.context.bank.questions["sc-card"]], "Cards"))
        await pilot.pause()
        screen = app.screen
        assert not screen.query("#explanation")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.query_one("#verdict").render().plain == "Model answer"
        assert screen.query("#explanation")
        await pilot.press("1")
        await pilot.pause()
        assert screen.question.id == "sc-card" and screen.index == 1  # Again: asked again this session
        assert "again, after Again" in str(screen.query_one("#quiz-progress").render())
        await pilot.press("enter", "3")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        console = Console(record=True, width=100)
        console.print(app.screen.query_one("#summary").query("Static")[1].content)
        assert "1 re-ask of questions rated Again" in console.export_text()
    with Store.open() as store:
        assert [(row["question_id"], row["rating"]) for row in store.answers()] == [("sc-card", 1), ("sc-card", 3)]


async def test_leaving_or_quitting_before_rating_still_saves_the_answer(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(row_key(app.screen, 1), "enter", "escape")  # answered right, not rated, session ended
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        await pilot.press("enter", "r")  # home, then a new session: sc-single is not due, sc-multi comes first
        await pilot.pause()
        assert app.screen.question.id == "sc-multi"
        await pilot.press("1", "2", "enter")  # wrong: Again is selected, then the app quits
        await pilot.pause()
        app.exit()
    rows = stored_answers()
    assert (rows["sc-single"]["rating"], rows["sc-single"]["correct"]) == (3, 1)
    assert (rows["sc-multi"]["rating"], rows["sc-multi"]["correct"]) == (1, 0)


async def test_choices_are_shuffled_and_a_wrong_pick_gets_its_why_not_first(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        widget = screen.query_one(ChoiceAnswer)
        rows = [str(row.render()) for row in widget.query(".row")]
        assert sorted(widget.order) == [0, 1, 2]
        await pilot.press(row_key(screen, 0), "enter")  # bfloat16: wrong
        await pilot.pause()
        picked = screen.query_one("#why-not-picked")
        others = screen.query_one("#why-not-others")
        assert "bfloat16" in picked.source and "same exponent range as float32" in picked.source
        assert "float32" in others.source and "bfloat16" not in others.source
        assert [str(row.render()) for row in widget.query(".row")] != [] and len(rows) == 3
        await pilot.press("1")
    assert json.loads(stored_answers()["sc-single"]["response"]) == 0  # stored in file order


async def test_a_ticked_box_stays_a_box_in_all_that_apply(make_app):
    """"[x]" is not read as markup: a ticked row keeps its box and its alignment."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.press("down", "enter")
        await pilot.pause()
        screen = app.screen
        while screen.question.type != "multi":
            await answer_right(pilot, screen)
            await pilot.press("enter")
            await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        lines = [screen.query_one(ChoiceAnswer).query(".row")[i].render_line(0).text for i in range(2)]
        assert lines[0].lstrip().startswith("[x] 1."), lines
        assert lines[1].lstrip().startswith("[ ] 2."), lines
        assert lines[0].index("1.") == lines[1].index("2.")


@pytest.mark.parametrize("keys, rating", [(("space", "down", "space", "down", "space", "enter"), None),
                                         (("space", "2"), 2), (("4",), 4)])
async def test_enter_and_1_to_4_rate_while_the_key_points_have_the_focus(make_app, keys, rating):
    """The caption says "Enter accepts, 1-4 rate at once": true with the focus in the key points too."""
    from dataclasses import replace

    from quizapp.tui.widgets.keypoints import KeyPointList

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        card = replace(app.context.bank.questions["sc-card"], key_points=("first point", "second point", "third"))
        app.push_screen(QuizScreen(app.context, [card], "Cards"))
        await pilot.pause()
        await pilot.press("enter")  # reveal
        await pilot.pause()
        screen = app.screen
        points = screen.query_one(KeyPointList)
        assert points.has_focus
        await pilot.press(*keys)
        await pilot.pause()
        expected = rating if rating is not None else points.suggested
        assert isinstance(app.screen, SummaryScreen)
    row = stored_answers()["sc-card"]
    assert row["rating"] == expected
    if "space" in keys:
        assert json.loads(row["response"]) == {"covered": list(range(keys.count("space")))}
