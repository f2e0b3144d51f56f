"""Command-palette entries for export, import and optimize: they ask a path, work in a thread, and notify."""

from __future__ import annotations

import json
import zipfile

from quizapp.study.store import Store
from quizapp.study.transfer import write_export
from quizapp.tui.screens.dialogs import PathScreen
from quizapp.tui.screens.home import HomeScreen

SIZE = (100, 32)


def palette(app, title: str):
    (command,) = [c for c in app.get_system_commands(app.screen) if c.title == title]
    return command


async def run_with_path(app, pilot, title: str, path: str) -> None:
    app.call_later(palette(app, title).callback)
    await pilot.pause()
    assert isinstance(app.screen, PathScreen)
    field = app.screen.query_one("#path")
    field.value = path
    await pilot.press("enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_export_then_import_progress_from_the_palette(make_app, work_dir, monkeypatch):
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append((message, kw.get("severity"))))
    async with app.run_test(size=SIZE) as pilot:
        app.context.store.record_grade("demo", status="pass", checks_passed=1, checks_total=1)
        await run_with_path(app, pilot, "Export progress", "mine.json")
        document = json.loads((work_dir / "mine.json").read_text())
        assert len(document["grades"]) == 1 and notices[-1][1] == "information"
        await run_with_path(app, pilot, "Import progress", "mine.json")
        assert "Nothing new" in notices[-1][0]
        (work_dir / "bad.json").write_text("{broken", encoding="utf-8")
        await run_with_path(app, pilot, "Import progress", "bad.json")
        assert "not valid JSON" in notices[-1][0] and notices[-1][1] == "error"
    with Store.open() as store:
        assert len(store.grades()) == 1


async def test_export_anki_from_the_palette(make_app, work_dir, monkeypatch):
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        await run_with_path(app, pilot, "Export Anki deck", "deck.apkg")
        assert zipfile.is_zipfile(work_dir / "deck.apkg")
        assert f"{len(app.context.bank.questions)} notes" in notices[-1]


async def test_optimize_from_the_palette_refuses_without_history(make_app, monkeypatch):
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append((message, kw.get("severity"))))
    async with app.run_test(size=SIZE) as pilot:
        app.call_later(palette(app, "Optimize scheduler").callback)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert "not enough history yet" in notices[-1][0] and notices[-1][1] == "warning"


async def test_an_import_from_the_palette_brings_the_daily_limit_and_home_shows_it(make_app, work_dir, tmp_path,
                                                                                  monkeypatch):
    with Store.open(tmp_path / "other-machine.sqlite3") as other:
        other.set_setting("new_per_day", 3)
        write_export(other, work_dir / "theirs.json")
    monkeypatch.setattr(HomeScreen, "REFRESH_S", 0.1)
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        assert app.screen.query_one("#tiles").figures[1] == ("7", "left today")
        await run_with_path(app, pilot, "Import progress", "theirs.json")
        await pilot.pause(0.4)
        assert app.context.store.new_per_day() == 3
        assert app.screen.query_one("#tiles").figures[1] == ("3", "left today")
        assert any("Your setting came along: new-per-day = 3." in n for n in notices), notices
