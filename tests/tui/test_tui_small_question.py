"""A question on the default 80x24 terminal: a long code line is wrapped under a visible mark, never
cut at the edge; an open card's key points are on screen while they have the focus; the bank browser's
first ↓ lands on the best match, and its list shows code without raw backticks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.geometry import Offset, Region
from textual.selection import Selection
from textual.widgets import Input, OptionList
from textual.widgets.markdown import MarkdownFence
from tuihelp import SMALL, settle

from quizapp.bank import load_bank, pack_files
from quizapp.bank.codewrap import CONTINUATION, code_pieces, continuation_lead, wrap_code
from quizapp.tui.screens.browse import BrowseScreen, QuestionInfoScreen
from quizapp.tui.screens.quiz import QuizScreen
from quizapp.tui.widgets.codeblock import CodeLabel
from quizapp.tui.widgets.keypoints import KeyPointList

# The line decides the answer at its very end: cut at the edge, choices 1 and 2 look alike.
DECIDING = 'print(y.dtype, torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"))'
COMMENT = "# the no-argument form asks about CUDA autocast, which is off in a CPU-only region"
LONG_POINT = ("after growth_interval steps without an inf or a NaN the scale doubles again, so that small "
              "gradients keep their precision")
MODEL_ANSWER = "\n".join(f"      {n}. A step of the model answer, long enough to fill a small screen." for n in range(12))

PACK = f"""
topic: small
title: Small screens
questions:
  - id: long-code
    type: single
    difficulty: 2
    prompt: |
      On a machine with or without a GPU:
      ```python
      with torch.autocast("cpu"):
          y = lin(x)
          {DECIDING}
          {COMMENT}
      ```
      What does `y.dtype` print?
    choices:
      - "`torch.bfloat16 True True`"
      - "`torch.bfloat16 False True`"
    answer: 1
    explanation: |
      The no-argument form asks about CUDA:
      ```python
      torch.is_autocast_enabled() == torch.is_autocast_enabled("cuda")  # False in a CPU-only region
      ```
  - id: card-points
    type: card
    difficulty: 1
    prompt: Why does a GradScaler skip steps?
    key_points:
      - inf or NaN gradients would corrupt the weights
      - the step is skipped
      - the scale is halved
      - {LONG_POINT}
    explanation: |
      A step whose gradients hold inf or NaN would corrupt the weights:
{MODEL_ANSWER}
"""


@pytest.fixture
def small_bank(write_pack):
    return load_bank(pack_files([write_pack(PACK, "small.yaml")]))


async def open_quiz(pilot, question_id: str) -> QuizScreen:
    app = pilot.app
    app.push_screen(QuizScreen(app.context, [app.context.bank.questions[question_id]], "Small"))
    await settle(pilot)
    return app.screen


def block_lines(fence: MarkdownFence) -> list[str]:
    """The code block's lines as drawn, its padding left out."""
    label = fence.query_one("#code-content")
    lines = [strip.text.rstrip() for strip in label.render_lines(Region(0, 0, *label.outer_size))]
    return [line for line in lines if line.strip()]


def unwrapped(lines: list[str]) -> list[str]:
    """The source lines back from the drawn ones: a continuation joins the line it continues."""
    source: list[str] = []
    for line in lines:
        if line.lstrip().startswith(CONTINUATION):
            source[-1] += " " + line.lstrip()[len(CONTINUATION):]
        else:
            source.append(line.strip())
    return source


def assert_readable(screen, fence: MarkdownFence, *wanted: str) -> None:
    """Every character of each wanted line is on screen, inside the block, each continuation marked."""
    lines = block_lines(fence)
    assert screen.region.contains_region(fence.region)
    assert all(len(line) <= fence.content_region.width for line in lines), lines
    assert any(line.lstrip().startswith(CONTINUATION) for line in lines), lines
    drawn = [" ".join(line.split()) for line in unwrapped(lines)]
    for line in wanted:
        assert " ".join(line.split()) in drawn, lines


@pytest.mark.parametrize("size", [SMALL, (60, 24)])
async def test_a_long_code_line_in_a_question_is_wrapped_under_a_mark(make_app, small_bank, size):
    app = make_app(bank=small_bank)
    async with app.run_test(size=size) as pilot:
        screen = await open_quiz(pilot, "long-code")
        assert_readable(screen, screen.query_one("#prompt").query_one(MarkdownFence), DECIDING, COMMENT)
        # The continuation of the comment starts under its mark, not at the code's left edge.
        comment_end = [line for line in block_lines(screen.query_one("#prompt").query_one(MarkdownFence))
                       if "CPU-only" in line]
        assert comment_end[0].lstrip().startswith(CONTINUATION)


async def test_a_long_code_line_in_the_explanation_is_wrapped_too(make_app, small_bank):
    app = make_app(bank=small_bank)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_quiz(pilot, "long-code")
        await pilot.press("2", "enter")
        await settle(pilot)
        explained = 'torch.is_autocast_enabled() == torch.is_autocast_enabled("cuda") # False in a CPU-only region'
        assert_readable(screen, screen.query_one("#explanation").query_one(MarkdownFence), explained)


async def test_the_bank_browser_shows_a_long_code_line_whole(make_app, small_bank):
    app = make_app(bank=small_bank)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("slash")
        await pilot.press(*"autocast")
        await pilot.press("enter")
        await settle(pilot)
        info = app.screen
        assert isinstance(info, QuestionInfoScreen) and info.question.id == "long-code"
        assert_readable(info, info.query_one(MarkdownFence), DECIDING, COMMENT)


async def test_copying_a_wrapped_block_gives_the_code_without_the_marks(make_app, small_bank):
    app = make_app(bank=small_bank)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_quiz(pilot, "long-code")
        code = screen.query_one("#prompt").query_one(CodeLabel)
        screen.selections = {code: Selection(None, None)}
        await pilot.pause()
        copied = screen.get_selected_text().splitlines()
        assert copied[2:] == ["    " + DECIDING, "    " + COMMENT]
        # From the middle of a cut line into its continuation: one line of code again.
        cut = next(y for y, line in enumerate(block_lines(screen.query_one("#prompt").query_one(MarkdownFence)))
                   if line.lstrip().startswith(CONTINUATION))
        assert code.get_selection(Selection(Offset(4, cut - 1), Offset(80, cut)))[0] == DECIDING


def test_the_cut_is_shared_text_that_loses_nothing():
    line = "    " + DECIDING
    for width in (20, 40, 60):
        lead = continuation_lead(line, width)
        assert lead == "    " + CONTINUATION
        pieces = code_pieces(line, width)
        assert len(pieces) > 1 and "".join(line[a:b] for a, b in pieces).replace(" ", "") == line.replace(" ", "")
        drawn = wrap_code(line, width)
        assert all(len(row) <= width for row in drawn) and drawn[1].startswith(lead)
    assert wrap_code(line, 200) == [line]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='ab c.(),=_"#界', max_size=160), st.sampled_from(["", "    ", " " * 30]),
       st.integers(min_value=8, max_value=90))
def test_every_cut_fits_and_drops_nothing_but_spaces(body, indent, width):
    line = indent + body
    pieces = code_pieces(line, width)
    assert "".join(line[a:b] for a, b in pieces).replace(" ", "") == line.replace(" ", "")
    assert all(line[a] != " " for a, _ in pieces[1:])
    assert all(cell_len(row) <= width for row in wrap_code(line, width))


def test_a_long_code_line_snapshot(snap_compare, make_app, small_bank):
    async def asked(pilot) -> None:
        await open_quiz(pilot, "long-code")

    assert snap_compare(make_app(bank=small_bank), run_before=asked, terminal_size=SMALL)


# -- an open card's key points --------------------------------------------------------------


async def reveal_card(pilot) -> tuple[QuizScreen, KeyPointList]:
    screen = await open_quiz(pilot, "card-points")
    await pilot.press("enter")
    await settle(pilot)
    return screen, screen.query_one(KeyPointList)


def on_screen(screen, widget) -> bool:
    return screen.query_one("#quiz-pane").region.contains_region(widget.region)


async def test_an_open_cards_key_points_are_on_screen_with_the_focus(make_app, small_bank):
    app = make_app(bank=small_bank)
    async with app.run_test(size=SMALL) as pilot:
        screen, points = await reveal_card(pilot)
        pane = screen.query_one("#quiz-pane")
        assert points.has_focus and pane.max_scroll_y > 0  # the model answer is longer than the screen
        assert on_screen(screen, points)
        # A point longer than the line wraps: all of it can be read before it is ticked.
        last = points.query(".row")[-1]
        drawn = " ".join(strip.text.strip() for strip in last.render_lines(Region(0, 0, *last.outer_size)))
        assert " ".join(drawn.split()) == "[ ] " + LONG_POINT
        # PageUp scrolls the model answer back; a tick brings the points back into view.
        await pilot.press("pageup")
        await settle(pilot)
        assert not on_screen(screen, points) and points.has_focus
        await pilot.press("down", "space")
        await settle(pilot)
        assert on_screen(screen, points) and points.covered == [1]


@pytest.mark.parametrize("key", ["end", "pagedown"])
async def test_end_and_pagedown_scroll_the_pane_to_the_key_points_first(make_app, small_bank, key):
    app = make_app(bank=small_bank)
    async with app.run_test(size=SMALL) as pilot:
        screen, points = await reveal_card(pilot)
        pane = screen.query_one("#quiz-pane")
        pane.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert not on_screen(screen, points)
        while pane.scroll_y < pane.max_scroll_y:
            before = pane.scroll_y
            await pilot.press(key)
            await settle(pilot)
            assert pane.scroll_y > before  # the pane moves, not the list's highlight
            assert points.cursor == 0
        assert on_screen(screen, points)
        await pilot.press(key)  # the pane is at its end: now the list itself
        await settle(pilot)
        assert points.cursor == len(points.points) - 1


def test_an_open_card_snapshot(snap_compare, make_app, small_bank):
    async def revealed(pilot) -> None:
        await reveal_card(pilot)

    assert snap_compare(make_app(bank=small_bank), run_before=revealed, terminal_size=SMALL)


# -- the bank browser -------------------------------------------------------------------------


async def open_browser(pilot, query: str) -> BrowseScreen:
    await pilot.press("slash")
    await pilot.press(*query)
    await settle(pilot)
    browser = pilot.app.screen
    assert isinstance(browser, BrowseScreen) and browser.query_one("#browse-query", Input).has_focus
    return browser


async def test_down_from_the_search_box_lands_on_the_best_match(make_app):
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        browser = await open_browser(pilot, "float16")
        results = browser.query_one("#browse-results", OptionList)
        first = browser.hits[0].id
        assert len(browser.hits) > 2
        assert results.highlighted is None  # the search box has the cursor
        await pilot.press("down")
        await settle(pilot)
        assert results.highlighted == 0
        await pilot.press("down", "up")
        assert results.highlighted == 0
        await pilot.press("up")  # above the best match: back to the search box, not round to the last
        assert results.highlighted is None
        await pilot.press("down")
        assert results.highlighted == 0
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, QuestionInfoScreen) and app.screen.question.id == first
        await pilot.press("escape")
        await settle(pilot)
        assert results.highlighted == 0  # back where the learner was


async def test_enter_in_the_search_box_opens_the_best_match(make_app):
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        browser = await open_browser(pilot, "float16")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, QuestionInfoScreen) and app.screen.question.id == browser.hits[0].id


async def test_the_browser_list_draws_code_without_backticks(make_app):
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        browser = await open_browser(pilot, "lora matrix")
        results = browser.query_one("#browse-results", OptionList)
        prompt = results.get_option(browser.hits[0].id).prompt
        assert "`" in browser.hits[0].prompt
        assert "`" not in prompt.plain and "LoRA's B matrix" in prompt.plain
