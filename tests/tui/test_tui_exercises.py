"""Exercise flows: create the starter file, edit it, grade it with a fake grader, cancel a grade."""

from __future__ import annotations

import time

import pytest
from fake_grader import LONG_MESSAGE
from textual.widgets import Static
from textual.widgets.data_table import ColumnKey, RowKey
from tuihelp import DATA, SIZE, settle, type_ahead

from quizapp.catalog import load_catalog
from quizapp.study.store import Store
from quizapp.tui.screens.dialogs import ConfirmScreen
from quizapp.tui.screens.editor import EditorScreen
from quizapp.tui.screens.exercise import ExerciseScreen
from quizapp.tui.widgets.charts import CurvePlot
from quizapp.tui.widgets.results import GradeResults

STARTER = (DATA / "exercises" / "scaled_loop" / "starter.py").read_text()


async def open_exercise(pilot) -> ExerciseScreen:
    await pilot.press("x", "enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ExerciseScreen)
    return pilot.app.screen


def message_texts(results: GradeResults) -> list[str]:
    table = results.table
    return [str(table.get_row_at(i)[2]) for i in range(table.row_count)]


async def test_every_message_and_title_shows_in_full_at_any_width(make_app, work_dir):
    """The grader's messages are the product's best part: no row is cut, at 160 columns or at 80."""
    (work_dir / "scaled_loop.py").write_text(STARTER)
    for size in ((160, 40), (80, 24)):
        app = make_app("fail")
        async with app.run_test(size=size) as pilot:
            screen = await open_exercise(pilot)
            await pilot.press("g")
            await settle(pilot)
            table = screen.query_one(GradeResults).table
            check, message = table.columns[ColumnKey("check")], table.columns[ColumnKey("message")]
            assert check.width >= len("Runs and returns a loss per epoch") or size[0] < 100
            row = table.rows[RowKey("scaled")]
            lines = -(-len(LONG_MESSAGE) // message.width)  # the wrapped message's lines, at least
            assert row.height >= lines >= 1
            assert 9 + check.width + message.width + 6 <= size[0]  # no column runs off the screen


def cell_texts(results: GradeResults) -> list[tuple[str, str]]:
    table = results.table
    return [(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(table.row_count)]


async def test_create_then_grade_shows_results_curves_and_the_reference(make_app, work_dir):
    app = make_app("pass")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("c", "enter")  # the path dialog, prefilled with ./scaled_loop.py
        await pilot.pause()
        assert (work_dir / "scaled_loop.py").read_text() == STARTER
        await pilot.press("g")
        await settle(pilot)
        results = screen.query_one(GradeResults)
        assert cell_texts(results) == [("✔ pass", "Runs and returns a loss per epoch"),
                                       ("✔ pass", "Backward runs on the scaled loss"),
                                       ("✔ pass", "Epoch losses match the reference")]
        assert "3/3 checks passed" in str(results.query_one("#grade-status").render())
        assert screen.query_one(CurvePlot).has_class("-shown")
        assert "last grade: pass 3/3" in str(screen.query_one("#file-line").render())
        await pilot.press("v")
        await pilot.pause()
        assert "return [0.5, 0.25]" in screen.query_one("#reference", Static).content.code
    with Store.open() as store:  # recorded once, by the grader, not again by the app
        assert [(g.exercise_id, g.status) for g in store.grades()] == [("scaled_loop", "pass")]


async def test_a_failing_check_shows_its_message(make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app("fail")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("g")
        await settle(pilot)
        results = screen.query_one(GradeResults)
        assert cell_texts(results) == [("✘ fail", "Backward runs on the scaled loss"),  # failures first
                                       ("✔ pass", "Runs and returns a loss per epoch"),
                                       ("✔ pass", "Epoch losses match the reference")]
        assert results.table.cursor_row == 0  # the first check that failed
        assert message_texts(results)[0] == LONG_MESSAGE  # in full, in the table
        await pilot.press("v")  # before a pass: asks first
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and screen.query_one("TabbedContent").active != "solution"
        await pilot.press("v", "y")
        await pilot.pause()
        assert "return [0.5, 0.25]" in screen.query_one("#reference", Static).content.code


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone, even between two looks
        return False
    # A killed child that is not reaped yet is a zombie: dead for our purpose.
    return state not in ("Z", "X")


async def test_cancel_kills_the_grader_and_its_children(make_app, work_dir, tmp_path, monkeypatch):
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("FAKE_GRADER_PIDS", str(pids_file))
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app("slow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("g")
        deadline = time.monotonic() + 20
        while not (pids_file.exists() and pids_file.read_text().endswith("\n")) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        pids = [int(p) for p in pids_file.read_text().split()]
        assert screen.grading and all(alive(p) for p in pids)
        await pilot.press("down")  # the UI answers while the grader runs
        await pilot.press("x")
        await settle(pilot)
        assert not screen.grading
        assert "cancelled" in str(screen.query_one("#grade-status").render())
    # Cancel escalates from SIGTERM to SIGKILL after a grace period; a loaded machine gets time to deliver both.
    deadline = time.monotonic() + 15
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


async def test_a_crashing_or_missing_grader_is_an_error_in_the_results_pane(make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app("crash")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("g")
        await settle(pilot)
        status = str(screen.query_one("#grade-status").render())
        assert "ended without a report (exit code 1)" in status
        assert "RuntimeError: the grader fell over" in status
        app.context.grader.prefix = [str(work_dir / "no-such-grader")]
        await pilot.press("g")
        await settle(pilot)
        assert "Could not start the grader" in str(screen.query_one("#grade-status").render())


async def test_create_asks_before_overwriting_and_keeps_the_file_on_no(make_app, work_dir):
    mine = work_dir / "scaled_loop.py"
    mine.write_text("my work\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_exercise(pilot)
        await pilot.press("c", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert mine.read_text() == "my work\n"
        await pilot.press("c", "enter", "y")
        await pilot.pause()
        assert mine.read_text() == STARTER


async def test_edit_in_the_app_and_save(make_app, work_dir):
    mine = work_dir / "scaled_loop.py"
    mine.write_text(STARTER)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_exercise(pilot)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        await pilot.press(*"# done", "enter", "ctrl+s", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen)
    assert mine.read_text() == "# done\n" + STARTER


@pytest.mark.parametrize("typed_ahead", [False, True], ids=["one key at a time", "typed ahead"])
async def test_unsaved_edits_are_not_dropped_without_asking(make_app, work_dir, typed_ahead):
    """Also when "x" and Escape arrive together: the x reaches the editor before Escape closes it."""
    mine = work_dir / "scaled_loop.py"
    mine.write_text(STARTER)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_exercise(pilot)
        await pilot.press("i")
        await pilot.pause()
        editor = app.screen
        if typed_ahead:
            await type_ahead(pilot, "x", "escape")
        else:
            await pilot.press("x", "escape")
            await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # keep editing
        await pilot.pause()
        assert app.screen is editor and editor.text == "x" + STARTER
    assert mine.read_text() == STARTER


async def test_hints_come_one_at_a_time_and_a_missing_editor_is_explained(make_app, work_dir, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app()
    notices = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("h")
        await pilot.pause()
        assert len(screen.query(".hint")) == 1
        await pilot.press("h")
        await pilot.pause()
        assert len(screen.query(".hint")) == 2
        assert screen.check_action("hint", ()) is None  # none left
        await pilot.press("e")
        await pilot.pause()
    assert any("Set $EDITOR" in n for n in notices)


async def test_a_hint_under_a_long_statement_is_scrolled_into_view_and_end_reaches_it(make_app):
    app = make_app(catalog=load_catalog())  # amp_training: a statement longer than the screen
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("x")
        await pilot.pause()
        table = app.screen.query_one("#exercises")
        table.move_cursor(row=table.get_row_index("amp_training"))
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert screen.exercise.id == "amp_training"
        await pilot.press("h")
        await settle(pilot)
        scroll = screen.query_one("#statement VerticalScroll")
        hint = screen.query(".hint").last()
        assert hint.size.height > 1  # laid out in full, not clipped to a line
        assert scroll.scroll_offset.y > 0  # moved down to it
        assert scroll.region.contains_region(hint.region.intersection(scroll.region)) and \
            hint.region.intersection(scroll.region).height >= min(hint.size.height, 3)
        for _ in range(len(screen.exercise.hints)):
            await pilot.press("h")
            await settle(pilot)
        await pilot.press("end")
        await settle(pilot)
        last = screen.query(".hint").last()
        assert last.region.bottom <= scroll.region.bottom  # the end of the last hint is on screen
        assert scroll.scroll_offset.y == scroll.max_scroll_y


async def test_hints_shown_in_the_cli_are_shown_in_the_app_and_continue_there(make_app, work_dir):
    from quizapp.study.store import Store

    (work_dir / "scaled_loop.py").write_text(STARTER)
    with Store.open() as store:
        store.set_hints_shown("scaled_loop", 1)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.pause()
        assert len(screen.query(".hint")) == 1
        await pilot.press("h")
        await pilot.pause()
        assert len(screen.query(".hint")) == 2
    with Store.open() as store:
        assert store.hints_shown("scaled_loop") == 2


async def test_home_and_end_go_to_the_first_and_the_last_exercise(make_app):
    app = make_app(catalog=load_catalog())  # the shipped exercises, then the drills
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        table = app.screen.query_one("#exercises")
        await pilot.press("end")
        exercises = [ex for ex in app.context.catalog.values() if not ex.is_drill]
        assert table.row_count == len(exercises) > 2 and table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0
        last = table.coordinate_to_cell_key((table.row_count - 1, 0)).row_key.value
        await pilot.press("end", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.id == last


async def test_drills_are_listed_apart_and_the_cursor_runs_into_them(make_app):
    """The drills have their own table under the exercises; Down on the last exercise goes on to the
    first drill, Up on the first drill comes back, and Enter opens the drill like an exercise."""
    app = make_app(catalog=load_catalog())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        exercises, drills = app.screen.query_one("#exercises"), app.screen.query_one("#drills")
        drill_ids = {ex.id for ex in app.context.catalog.values() if ex.is_drill}
        assert drill_ids and {drills.coordinate_to_cell_key((i, 0)).row_key.value
                              for i in range(drills.row_count)} == drill_ids
        assert not any(exercises.coordinate_to_cell_key((i, 0)).row_key.value in drill_ids
                       for i in range(exercises.row_count))
        await pilot.press("end", "down")
        assert app.screen.focused is drills and drills.cursor_row == 0
        await pilot.press("up")
        assert app.screen.focused is exercises and exercises.cursor_row == exercises.row_count - 1
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.is_drill


async def test_keys_typed_ahead_open_the_exercise_the_arrows_moved_to(make_app):
    """Down, down, Enter queued together (a fast typist, a paste) open the third exercise, not the first."""
    app = make_app(catalog=load_catalog())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        table = app.screen.query_one("#exercises")
        third = table.coordinate_to_cell_key((2, 0)).row_key.value
        await type_ahead(pilot, "down", "down", "enter")
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.id == third


async def test_with_no_exercises_enter_is_not_offered(make_app):
    app = make_app(catalog={})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        assert "open" not in {active.binding.id for active in app.screen.active_bindings.values()
                              if active.enabled}
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.query_one("#no-exercises", Static).display


async def test_a_cli_grade_of_another_copy_does_not_move_the_apps_file(make_app, work_dir, tmp_path):
    from quizapp.study.store import Store

    mine = work_dir / "scaled_loop.py"
    mine.write_text(STARTER)
    elsewhere = tmp_path / "elsewhere" / "scaled_loop.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text(STARTER)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        assert screen.path == mine
        with Store.open() as store:  # as `quizapp grade elsewhere/scaled_loop.py` in another terminal
            store.record_grade("scaled_loop", status="fail", checks_passed=1, checks_total=3,
                               file_path=str(elsewhere))
        screen.refresh_file_line()
        await pilot.pause()
        assert screen.path == mine
        assert "./scaled_loop.py" in str(screen.query_one("#file-line").render())
