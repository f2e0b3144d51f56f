"""The footer and the help screen at the size most terminals open at (80x24), and narrower."""

from __future__ import annotations

import pytest

from quizapp.tui.screens.help import HelpScreen
from quizapp.tui.widgets.footer import KeysFooter


def visible_actions(app, width: int) -> list[str]:
    """The actions of the footer keys drawn wholly inside the terminal, left to right."""
    footer = app.screen.query_one(KeysFooter)
    keys = [key for key in footer.children if getattr(key, "action", None)]
    return [key.action for key in keys if key.region.width and key.region.right <= width]


async def footer_drawn(app, pilot) -> None:
    """The footer fills in a refresh after the screen's bindings are known."""
    for _ in range(50):
        if any(getattr(key, "action", None) and key.region.width for key in app.screen.query_one(KeysFooter).children):
            return
        await pilot.pause(0.02)
    raise AssertionError("the footer never showed a key")


@pytest.mark.parametrize("width", [80, 100])
async def test_home_footer_shows_help_browse_and_quit_at_80_columns(make_app, width):
    app = make_app()
    async with app.run_test(size=(width, 24)) as pilot:
        await footer_drawn(app, pilot)
        shown = visible_actions(app, width)
        assert shown[0] == "help", shown  # first, whatever else is cut
        assert {"help", "app.review", "app.exercises", "app.browse", "app.quit"} <= set(shown), shown
        palette = [key for key in app.screen.query_one(KeysFooter).children
                   if getattr(key, "action", None) == "command_palette"]
        # The palette's key covered the screen's own keys at 80 columns (and left a stray letter).
        assert bool(palette) == (width >= 100)


async def test_help_comes_first_on_every_screen_even_at_60_columns(make_app):
    app = make_app()
    async with app.run_test(size=(60, 20)) as pilot:
        for key in ("", "x", "enter"):  # home, the exercise list, one exercise
            if key:
                await pilot.press(key)
                await pilot.pause()
            await footer_drawn(app, pilot)
            assert visible_actions(app, 60)[:1] == ["help"], key


async def test_help_starts_with_the_screens_own_keys_and_lists_quit_once(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = app.screen.rows
        assert rows[0][1] == "Review"  # not the list's cursor keys
        assert [what for _, what, _ in rows].count("Quit") == 1
        assert next(keys for keys, what, _ in rows if what == "Quit").split() == ["q", "^q"]
        cursor_rows = [i for i, (_, what, _) in enumerate(rows) if what in ("Down", "Up", "Page down")]
        own_rows = [i for i, (_, what, _) in enumerate(rows) if what in ("Review", "Exercises", "Stats")]
        assert cursor_rows and max(own_rows) < min(cursor_rows)
        assert "Start here" in str(app.screen.query_one("#start-here").render())
