"""First-hour polish: the topic picker filters as you type, the exercise list keeps topics whole and
together, feedback reads well (the right order as steps, headings that fit the answer), and the
session summary shows prompts as text, not Markdown source."""

from __future__ import annotations

from textual.widgets import OptionList
from tuihelp import SIZE

from quizapp.catalog import load_catalog
from quizapp.tui.screens.dialogs import TopicScreen
from quizapp.tui.screens.quiz import QuizScreen
from quizapp.tui.screens.summary import first_line


async def test_typing_in_the_topic_picker_filters_and_enter_studies_the_match(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, TopicScreen)
        topics = app.screen.query_one("#topic-list", OptionList)
        everything = topics.option_count
        await pilot.press(*"lora")
        await pilot.pause()
        assert topics.option_count == 1 < everything
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen) and app.screen.result.topic == "lora"


async def test_a_filter_that_matches_nothing_says_so_and_enter_does_nothing(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        await pilot.press(*"zzz", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TopicScreen)
        topics = app.screen.query_one("#topic-list", OptionList)
        assert "No topic matches" in str(topics.get_option_at_index(0).prompt)


async def test_the_exercise_list_groups_by_topic_and_shows_each_topic_in_full(make_app):
    catalog = load_catalog()
    app = make_app(catalog=catalog)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        table = app.screen.query_one("#exercises")
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        topics = [str(row[3]) for row in rows]
        assert topics == sorted(topics)
        assert set(topics) == {ex.topic for ex in catalog.values() if not ex.is_drill}
        width = table.columns[next(k for k in table.columns if k.value == "topic")].width
        assert width >= max(len(t) for t in topics)


def test_summary_prompts_are_plain_text():
    assert first_line("Which **output** dtype does `torch.mm` give, *by default*?") == \
        "Which output dtype does `torch.mm` give, by default?"
    assert first_line("See [the docs](https://pytorch.org) on __init__") == "See the docs on __init__"
    assert first_line("2*3*4 stays") == "2*3*4 stays"


async def test_a_right_pick_reads_why_the_other_choices_are_wrong(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        question = app.context.bank.questions["sc-single"]
        app.push_screen(QuizScreen(app.context, [question], "One"))
        await pilot.pause()
        screen = app.screen
        from test_tui_quiz import row_key

        await pilot.press(row_key(screen, question.answer), "enter")
        await pilot.pause()
        assert "Right" in screen.query_one("#verdict").render().plain
        others = screen.query_one("#why-not-others").source
        assert others.startswith("**Why the other choices are wrong**")


async def test_a_wrong_order_shows_the_right_one_as_numbered_steps(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        question = app.context.bank.questions["sc-order"]
        app.push_screen(QuizScreen(app.context, [question], "One"))
        await pilot.pause()
        await pilot.press("enter")  # the shuffled order as shown: never the right one
        await pilot.pause()
        verdict = app.screen.query_one("#verdict").render().plain
        assert "->" not in verdict
        for number, item in enumerate(question.items, 1):
            assert f"{number}. {item.replace('`', '')}" in verdict


async def test_a_numeric_answer_that_is_not_a_number_is_asked_again_not_marked_wrong(make_app, monkeypatch):
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(QuizScreen(app.context, [app.context.bank.questions["sc-numeric"]], "One"))
        await pilot.pause()
        screen = app.screen
        await pilot.press(*"1 GiB", "enter")
        await pilot.pause()
        assert screen.pending is None and not screen.query("#verdict")
        assert any("not a number" in n for n in notices)
        await pilot.press(*["backspace"] * 5, *"65504", "enter")
        await pilot.pause()
        assert screen.pending is not None and screen.pending.verdict.correct is True


async def test_help_rows_wrap_whole_at_80_columns(make_app):
    from textual.widgets import DataTable

    from quizapp.tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("x", "enter")  # the exercise screen has the longest descriptions
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys", DataTable)
        assert sum(column.get_render_width(table) for column in table.ordered_columns) <= table.size.width
        more = table.ordered_columns[2]
        for index, (_, _, tooltip) in enumerate(app.screen.rows):
            row = table.rows[table.coordinate_to_cell_key((index, 0)).row_key]
            assert str(table.get_row_at(index)[2]) == (tooltip or "")
            assert row.height >= -(-len(tooltip or " ") // more.width)  # wrapped, never cut
