"""The app's study controls: undo of the last rating, flag and suspend keys on the quiz screen, the
daily new-question limit on home, and the bank browser (search, open a question, see its history)."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import Input, OptionList, Static
from tuihelp import NOW, SIZE, pack_bank, settle

from quizapp.study.schedule import record_review
from quizapp.study.store import NEW_PER_DAY_KEY, Store
from quizapp.tui.screens.browse import BrowseScreen, QuestionInfoScreen
from quizapp.tui.screens.dialogs import ConfirmScreen, NoteScreen
from quizapp.tui.screens.quiz import QuizScreen
from quizapp.tui.widgets.answers import ChoiceAnswer


def due_single() -> str:
    """sc-single answered 10 days before NOW: due now, so every review starts with it. Its card JSON."""
    with Store.open() as store:
        record_review(store, pack_bank().questions["sc-single"], rating=3, correct=True,
                      now=NOW - timedelta(days=10))
        return store.card_json("sc-single")


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def start_review(pilot) -> QuizScreen:
    await pilot.press("r")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, QuizScreen)
    return screen


async def answer_single_right(pilot, screen: QuizScreen) -> None:
    q = screen.question
    assert q.type == "single"
    await pilot.press(str(screen.query_one(ChoiceAnswer).order.index(q.answer) + 1), "enter")
    await settle(pilot)


async def test_u_takes_back_the_last_rating_and_the_card_is_as_it_was(make_app):
    before = due_single()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_review(pilot)
        assert screen.question.id == "sc-single"
        await answer_single_right(pilot, screen)
        await pilot.press("4")  # Easy: saved at once, the next question comes
        await settle(pilot)
        assert screen.question.id != "sc-single"
        with Store.open() as store:
            assert store.card_json("sc-single") != before and store.answer_count() == 2
        await pilot.press("ctrl+z")  # u, or ctrl+z from a typed answer's box
        await settle(pilot)
        assert screen.question.id == "sc-single" and screen.session.position[0] == 1
        with Store.open() as store:
            assert store.card_json("sc-single") == before  # the FSRS card JSON, exactly
            assert store.answer_count() == 1
        # answered again, rated Hard this time
        await answer_single_right(pilot, screen)
        await pilot.press("2")
        await settle(pilot)
        assert screen.question.id == "sc-multi"  # a choice question: u is no answer to it, so it undoes
        await pilot.press("u")
        await settle(pilot)
        assert screen.question.id == "sc-single"
    with Store.open() as store:
        assert store.card_json("sc-single") == before and store.answer_count() == 1


async def test_f_flags_with_a_note_and_bang_suspends_after_a_confirm(make_app):
    due_single()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_review(pilot)
        assert screen.question.id == "sc-single"
        await pilot.press("f")
        await settle(pilot)
        assert isinstance(app.screen, NoteScreen)
        await pilot.press(*"float16 only?", "enter")
        await settle(pilot)
        assert app.screen is screen
        with Store.open() as store:
            mark = store.marks()["sc-single"]
        assert mark.flagged and mark.note == "float16 only?"
        assert any("Flagged sc-single" in str(n.message) for n in app._notifications)
        await pilot.press("exclamation_mark")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is screen and screen.question.id != "sc-single"
        assert "sc-single" not in [q.id for q in screen.session.questions[screen.session.index:]]
        with Store.open() as store:
            assert store.suspended_ids() == {"sc-single"}
        assert any("Suspended sc-single" in str(n.message) for n in app._notifications)
    # the next session has no sc-single
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_review(pilot)
        assert "sc-single" not in [q.id for q in screen.session.questions]


async def test_home_shows_the_new_questions_left_today_and_a_session_obeys_the_limit(make_app):
    with Store.open() as store:
        store.set_setting(NEW_PER_DAY_KEY, 2)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.query_one("#tiles").figures[1] == ("2", "left today")
        screen = await start_review(pilot)
        assert len(screen.session.questions) == 2  # nothing due: two new questions, the daily limit


async def test_the_bank_browser_finds_opens_and_shows_the_history(make_app):
    due_single()
    with Store.open() as store:
        store.set_mark("sc-single", flagged=True, note="check the wording", at=NOW)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await settle(pilot)
        browser = app.screen
        assert isinstance(browser, BrowseScreen)
        assert app.screen.query_one("#browse-query", Input).has_focus
        await pilot.press(*"loss scaling")
        await settle(pilot)
        assert [q.id for q in browser.hits][0] == "sc-single"
        assert "match, best first" in text_of(browser, "#browse-count")
        options = browser.query_one("#browse-results", OptionList)
        assert "⚑ flagged" in str(options.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await settle(pilot)
        info = app.screen
        assert isinstance(info, QuestionInfoScreen) and info.question.id == "sc-single"
        history = text_of(info, "#info-history")
        assert "History (1 answer)" in history and "2026-02-19" in history and "rated Good" in history
        schedule = text_of(info, "#info-schedule")
        assert "Next due:" in schedule and "Stability:" in schedule and "days" in schedule
        assert "Flagged: check the wording" in text_of(info, "#info-marks")
        await pilot.press("exclamation_mark")  # suspend from here
        await settle(pilot)
        assert "Suspended" in text_of(info, "#info-marks")
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is browser
        assert "⏸ suspended" in str(browser.query_one("#browse-results", OptionList).get_option_at_index(0).prompt)
        # a query that matches nothing says so
        await pilot.press(*" zebra")
        await settle(pilot)
        assert browser.hits == []
    with Store.open() as store:
        assert store.suspended_ids() == {"sc-single"}
