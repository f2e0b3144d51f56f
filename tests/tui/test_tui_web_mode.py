"""What the app does differently in a browser (`quizapp serve`, where Textual's `App.is_web` is true):
exports arrive as downloads, an import reads a file of the app's folder, and no key hands the page's
terminal to an outside editor. The same app in a terminal keeps its paths and its $EDITOR key."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from quizapp.tui.app import QuizApp
from quizapp.tui.screens.dialogs import PathScreen
from quizapp.tui.screens.exercise import ExerciseScreen

SIZE = (100, 32)


@pytest.fixture
def web(monkeypatch):
    monkeypatch.setattr(QuizApp, "is_web", property(lambda self: True))


def palette(app, title: str):
    (command,) = [c for c in app.get_system_commands(app.screen) if c.title == title]
    return command


def delivered(app, monkeypatch) -> list[tuple[bytes, dict]]:
    got = []

    def deliver_binary(file, **kwargs):
        got.append((file.read() if isinstance(file, io.IOBase) else open(file, "rb").read(), kwargs))
        return "key"

    monkeypatch.setattr(app, "deliver_binary", deliver_binary)
    return got


async def run_command(app, pilot, title: str) -> None:
    app.call_later(palette(app, title).callback)
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_exports_are_downloads_in_a_browser(web, make_app, work_dir, monkeypatch):
    app = make_app()
    notices = []
    got = delivered(app, monkeypatch)
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        app.context.store.record_grade("demo", status="pass", checks_passed=1, checks_total=1)
        await run_command(app, pilot, "Export progress")
        assert not isinstance(app.screen, PathScreen), "no path to ask: the browser saves it"
        data, options = got[-1]
        assert options["save_filename"] == "quizapp-progress.json"
        assert len(json.loads(data)["grades"]) == 1
        assert "on its way to your browser's downloads" in notices[-1]
        await run_command(app, pilot, "Export Anki deck")
        data, options = got[-1]
        assert options["save_filename"] == "quizapp.apkg" and zipfile.is_zipfile(io.BytesIO(data))
    assert list(work_dir.iterdir()) == [], "nothing was written into the app's folder"


async def test_an_import_in_a_browser_reads_a_file_of_the_apps_folder(web, make_app, work_dir, monkeypatch):
    from quizapp.study.transfer import write_export

    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        write_export(app.context.store, work_dir / "from-laptop.json")
        app.call_later(palette(app, "Import progress").callback)
        await pilot.pause()
        assert isinstance(app.screen, PathScreen)
        assert app.screen.query_one("#path").value == "from-laptop.json", "the newest file there, prefilled"
        assert str(work_dir) in str(app.screen.query_one("#path-folder").render())
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Nothing new in from-laptop.json" in notices[-1]


async def test_no_outside_editor_in_a_browser(web, make_app, work_dir):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExerciseScreen)
        assert screen.check_action("editor", ()) is False  # hidden, not merely dimmed
        assert [ab for ab in screen.active_bindings.values() if ab.binding.action == "editor"] == []


async def test_in_a_terminal_the_editor_key_and_the_paths_stay(make_app, work_dir):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.call_later(palette(app, "Export progress").callback)
        await pilot.pause()
        assert isinstance(app.screen, PathScreen)
        await pilot.press("escape")
        await pilot.press("x", "enter")
        await pilot.pause()
        assert app.screen.check_action("editor", ()) is True
