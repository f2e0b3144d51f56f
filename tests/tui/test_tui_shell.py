"""The shell: stats, help, the command palette, themes, bad data, and what starting the app imports."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from textual.widgets import DataTable
from tuihelp import NOW, SIZE, pack_bank

from quizapp.bank import load_bank
from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.tui.grading import CheckFinished, GradeFinished, GradeStarted, event_message, parse_event
from quizapp.tui.screens.help import HelpScreen
from quizapp.tui.screens.home import HomeScreen
from quizapp.tui.screens.problems import BankProblemsScreen, StoreProblemScreen
from quizapp.tui.screens.stats import StatsScreen


async def test_stats_shows_topics_and_grade_history(make_app):
    app = make_app()
    with Store.open() as store:
        record_review(store, pack_bank().questions["sc-single"], rating=3, correct=True, now=NOW)
        store.record_grade("scaled_loop", status="fail", checks_passed=2, checks_total=3, device="cpu",
                           duration_s=1.0, at=NOW)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StatsScreen)
        topics = screen.query_one("#topic-table", DataTable)
        assert topics.row_count == 2
        assert "1/6" in [str(c) for c in topics.get_row("scaling")]
        history = screen.query_one("#grade-table", DataTable)
        assert [str(c) for c in history.get_row_at(0)][:3] == ["2026-03-01 12:00", "✘ fail", "2/3"]
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_help_lists_the_keys_of_the_screen_below(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = {row[1]: row[0] for row in app.screen.rows}
        assert keys["Review"] == "r" and keys["Exercises"] == "x" and keys["Help"].startswith("?")
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_every_footer_action_is_in_the_command_palette(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for key in ("", "x", "enter"):  # home, exercises, one exercise
            if key:
                await pilot.press(key)
                await pilot.pause()
            titles = {c.title for c in app.get_system_commands(app.screen)}
            shown = {a.binding.description for a in app.screen.active_bindings.values()
                     if a.binding.show and a.enabled and not a.binding.system}
            assert shown <= titles, shown - titles
        assert {"Grade", "Create", "Hint"} <= titles


async def test_palette_command_runs_the_action(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        (stats,) = [c for c in app.get_system_commands(app.screen) if c.title == "Stats"]
        app.call_later(stats.callback)
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)


async def test_light_and_dark_themes(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.current_theme.dark
        await pilot.press("ctrl+t")
        assert not app.current_theme.dark
        await pilot.press("ctrl+t")
        assert app.current_theme.dark


async def test_a_corrupt_store_is_reported_and_left_alone(make_app, quizapp_home):
    quizapp_home.mkdir(parents=True)
    db = quizapp_home / "progress.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, StoreProblemScreen)
        text = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert "corrupt" in text and "progress.sqlite3" in text and "Nothing was changed" in text
        await pilot.press("q")
    assert app.return_code == 1
    assert db.read_bytes() == b"this is not a database" * 100


async def test_a_store_from_a_newer_version_is_reported(make_app, quizapp_home):
    with Store.open() as store:
        store.conn.execute("PRAGMA user_version = 999")
    app = make_app()
    async with app.run_test(size=SIZE):
        assert isinstance(app.screen, StoreProblemScreen)
        assert "newer quizapp" in app.screen.error.reason


async def test_bad_question_files_are_named_and_the_rest_still_loads(make_app, write_pack):
    good = write_pack("""
        topic: ok
        title: Fine topic
        questions:
          - {id: ok-1, type: card, difficulty: 1, prompt: Why?, explanation: Because.}
        """, "good.yaml")
    bad = write_pack("topic: [unclosed\n", "bad.yaml")
    app = make_app(bank=load_bank([good, bad]))
    async with app.run_test(size=SIZE) as pilot:
        banner = str(app.screen.query_one("#banner").render())
        assert "1 problem in 1 question file" in banner
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, BankProblemsScreen)
        assert "bad.yaml:" in " ".join(str(s.render()) for s in app.screen.query("Static"))


async def test_no_questions_at_all_still_starts(make_app):
    app = make_app(bank=load_bank([]), catalog={})
    async with app.run_test(size=SIZE) as pilot:
        assert "No questions to study" in str(app.screen.query_one("#empty-bank").render())
        await pilot.press("r")  # nothing to study: a notice, no crash
        await pilot.press("x")
        await pilot.pause()
        assert "No exercises" in str(app.screen.query_one("#no-exercises").render())


def test_grader_lines_that_are_not_events_are_ignored():
    assert parse_event("Grading foo.py...") is None
    assert parse_event("{not json") is None
    assert parse_event('{"no": "event"}') is None
    assert parse_event(b'["a list"]') is None
    start = event_message(parse_event(json.dumps({"event": "start", "device": "cpu", "torch": "2",
                                                  "checks": [{"id": "a", "title": "A"}]})))
    assert isinstance(start, GradeStarted) and start.checks == [("a", "A")]
    check = event_message(parse_event(json.dumps({"event": "check", "id": "a", "title": "A", "status": "fail",
                                                  "message": "m", "data": {"curves": {"series": {"y": [1]}}}})))
    assert isinstance(check, CheckFinished) and check.check.curves == {"series": {"y": [1]}}
    assert isinstance(event_message({"event": "report", "report": {"status": "pass"}}), GradeFinished)
    assert event_message({"event": "report", "report": "not a dict"}) is None
    assert event_message({"event": "something new"}) is None


def test_starting_the_app_never_imports_torch(tmp_path):
    """The app starts, opens every screen that needs no grader, and exits; torch stays out."""
    script = textwrap.dedent("""
        import asyncio, sys
        from quizapp.tui.app import QuizApp

        async def main():
            app = QuizApp()
            async with app.run_test() as pilot:
                for key in ("x", "enter", "escape", "escape", "s", "escape", "r", "escape"):
                    await pilot.press(key)
                await pilot.pause()
        asyncio.run(main())
        print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_bare_quizapp_runs_the_app_and_exits_with_its_code(monkeypatch):
    from click.testing import CliRunner

    import quizapp.tui.app
    from quizapp.cli import cli

    class Ran(quizapp.tui.app.QuizApp):
        def run(self, *args, **kwargs):
            self.exit(return_code=3)  # as the store problem screen does, without a terminal

    monkeypatch.setattr(quizapp.tui.app, "QuizApp", Ran)
    assert CliRunner().invoke(cli, []).exit_code == 3
