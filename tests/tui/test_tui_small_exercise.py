"""The exercise screens at the default terminal size (80x24) and narrower: a failed check in view
first, the keys that scroll the results, the exercise list with every id in full, and "Your file"
staying the learner's own."""

from __future__ import annotations

from fake_grader import LONG_MESSAGE
from textual.containers import ScrollableContainer
from textual.widgets import DataTable, Input, Static
from tuihelp import SMALL, STARTER, settle

from quizapp.catalog import load_catalog
from quizapp.grading.result import CheckResult, GradeReport
from quizapp.study.store import Store
from quizapp.tui.screens.dialogs import PathScreen
from quizapp.tui.screens.exercise import ExerciseScreen
from quizapp.tui.widgets.results import GradeResults

PASSING = [CheckResult(f"step{n}", f"Step {n} of the loop runs as the reference's", "pass") for n in range(1, 11)]
FAILING = CheckResult("scaled", "Backward runs on the scaled loss", "fail", LONG_MESSAGE)


class ManyChecksGrader:
    """Ten checks that pass, then one that fails with a long message: in the order they are defined,
    the failure is below the fold of an 80x24 terminal."""

    def warm_up(self) -> None:
        pass

    async def grade(self, path, exercise, post, *, token=None) -> None:
        from quizapp.tui.grading import CheckFinished, GradeFinished, GradeStarted

        checks = [*PASSING, FAILING]
        post(GradeStarted("cpu", "9.9.9", [(c.id, c.title) for c in checks], token))
        for check in checks:
            post(CheckFinished(check, token))
        post(GradeFinished(GradeReport(exercise.id, str(path), "fail", None, "cpu", "9.9.9", 0.5, checks), token))


def pane_of(widget) -> ScrollableContainer:
    return next(node for node in widget.ancestors if isinstance(node, ScrollableContainer))


def row_lines(table: DataTable, key: str) -> tuple[int, int]:
    """The screen lines a row takes: its first and the one after its last."""
    index = table.get_row_index(key)
    top = table.region.y + table.header_height + sum(row.height for row in table.ordered_rows[:index])
    return top, top + table.ordered_rows[index].height


def row_shown_whole(table: DataTable, key: str) -> bool:
    view = pane_of(table).scrollable_content_region
    top, bottom = row_lines(table, key)
    return view.y <= top and bottom <= view.bottom


async def graded(pilot) -> ExerciseScreen:
    """Open the test exercise and grade it with ManyChecksGrader."""
    pilot.app.context.grader = ManyChecksGrader()
    await pilot.press("x", "enter", "g")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExerciseScreen)
    return screen


def check_keys(results: GradeResults) -> list[str]:
    table = results.table
    return [table.coordinate_to_cell_key((row, 0)).row_key.value for row in range(table.row_count)]


# -- the results ---------------------------------------------------------------------------

async def test_a_failed_check_comes_first_and_shows_whole_under_the_status_at_80x24(make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    async with make_app().run_test(size=SMALL) as pilot:
        screen = await graded(pilot)
        results = screen.query_one(GradeResults)
        # Failures first, then the passes, each in the order the exercise defines them.
        assert check_keys(results) == ["scaled", *(c.id for c in PASSING)]
        assert results.table.cursor_row == 0
        assert pane_of(results).scroll_y == 0  # the status line above it shows too
        assert "10/11 checks passed" in str(results.query_one("#grade-status", Static).render())
        assert row_shown_whole(results.table, "scaled")
        assert results.table.rows["scaled"].height >= 3  # its long message wrapped, in full


def test_a_failed_check_at_80x24_snapshot(snap_compare, make_app, work_dir):
    (work_dir / "scaled_loop.py").write_text(STARTER)
    assert snap_compare(make_app(), run_before=graded, terminal_size=(80, 24))


async def test_the_keys_scroll_the_results_on_the_first_press_after_a_grade(make_app, work_dir):
    """The checks' table has the focus after a grade; PageDown, End, Down, PageUp and Home move what
    the screen shows at once, with no Tab to another widget first."""
    (work_dir / "scaled_loop.py").write_text(STARTER)
    async with make_app().run_test(size=SMALL) as pilot:
        for key in ("pagedown", "end", "down"):
            screen = await graded(pilot)  # a fresh grade each time: the key is the first one after it
            results = screen.query_one(GradeResults)
            pane, table = pane_of(results), results.table
            assert pane.max_scroll_y > 0 and pane.scroll_y == 0
            await pilot.press(key)
            await pilot.pause()
            if key == "down":
                assert table.cursor_row == 1 and row_shown_whole(table, PASSING[0].id)
            else:
                assert pane.scroll_y > 0, key
            if key == "end":
                assert pane.scroll_y == pane.max_scroll_y
                assert table.cursor_row == table.row_count - 1
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("escape")  # back home: the next round opens the exercise again
            await pilot.pause()
        screen = await graded(pilot)
        results = screen.query_one(GradeResults)
        pane, table = pane_of(results), results.table
        await pilot.press("s", "r")  # away and back: the checks still take the keys
        await pilot.press("end")
        await pilot.pause()
        bottom = pane.scroll_y
        assert bottom == pane.max_scroll_y > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert pane.scroll_y < bottom
        top, bottom = row_lines(table, check_keys(results)[table.cursor_row])  # a row on screen is highlighted
        assert top < pane.scrollable_content_region.bottom and bottom > pane.scrollable_content_region.y
        await pilot.press("home")
        await pilot.pause()
        assert pane.scroll_y == 0 and table.cursor_row == 0
        # Down walks the checks one by one, each shown whole as it is highlighted.
        for index in range(1, table.row_count):
            await pilot.press("down")
            await pilot.pause()
            assert table.cursor_row == index and row_shown_whole(table, check_keys(results)[index])


# -- the exercise list ---------------------------------------------------------------------

async def test_the_exercise_list_shows_every_title_and_id_in_full_at_80_and_60_columns(make_app):
    catalog = load_catalog()  # the shipped exercises and drills: long titles, ids up to 28 characters
    for width in (80, 60):
        app = make_app(catalog=catalog)
        async with app.run_test(size=(width, 24)) as pilot:
            await pilot.press("x")
            await settle(pilot)
            for table_id in ("exercises", "drills"):
                table = app.screen.query_one(f"#{table_id}", DataTable)
                assert [c.key.value for c in table.ordered_columns][:2] == ["title", "status"]  # the name first
                title = table.ordered_columns[0]
                assert table.region.right <= width
                assert sum(column.get_render_width(table) for column in table.ordered_columns) <= table.size.width
                for index in range(table.row_count):
                    key = table.coordinate_to_cell_key((index, 0)).row_key.value
                    exercise = catalog[key]
                    cell = str(table.get_cell(key, "title"))
                    assert cell.split("\n")[-1] == exercise.id and len(exercise.id) <= title.width, (width, key)
                    assert exercise.list_title in cell.replace("\n", " ")
                    wrapped = -(-len(exercise.list_title) // title.width)
                    assert table.rows[key].height >= wrapped + 1  # the title's lines, then the id's


async def test_the_cursor_keeps_its_row_in_view_down_the_list_at_80x24(make_app):
    app = make_app(catalog=load_catalog())
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("x")
        await settle(pilot)
        exercises, drills = app.screen.query_one("#exercises", DataTable), app.screen.query_one("#drills", DataTable)
        for _ in range(exercises.row_count + 1):  # down the exercises, then two drills
            await pilot.press("down")
            await pilot.pause()
            table = app.screen.focused
            key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
            assert row_shown_whole(table, key), key
        assert app.screen.focused is drills and drills.cursor_row == 1
        await pilot.resize_terminal(60, 24)  # the rows are laid out anew: the cursor stays, in view
        await settle(pilot)
        key = drills.coordinate_to_cell_key((1, 0)).row_key.value
        assert app.screen.focused is drills and drills.cursor_row == 1 and row_shown_whole(drills, key)
        await pilot.press("end")
        await pilot.pause()
        last = drills.coordinate_to_cell_key((drills.row_count - 1, 0)).row_key.value
        assert drills.cursor_row == drills.row_count - 1 and row_shown_whole(drills, last)


# -- your file -----------------------------------------------------------------------------

def file_line(screen: ExerciseScreen) -> str:
    return str(screen.query_one("#file-line", Static).render())


def scratch_grade(path) -> None:
    """What `quizapp grade /tmp/scratch.py` in another terminal leaves in the store."""
    with Store.open() as store:
        store.record_grade("scaled_loop", status="fail", checks_passed=1, checks_total=3, file_path=str(path))


async def test_your_file_does_not_follow_a_grade_of_a_scratch_file(make_app, work_dir, tmp_path):
    scratch = tmp_path / "scratch" / "scratch.py"
    scratch.parent.mkdir()
    scratch.write_text(STARTER)
    scratch_grade(scratch)
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        screen = app.screen
        assert screen.path == work_dir / "scaled_loop.py"  # the folder's own, not created yet
        assert "./scaled_loop.py  (not created yet" in file_line(screen)
        assert screen.saves.watched != scratch


async def test_the_file_chosen_in_the_app_stays_yours_in_the_next_session(make_app, work_dir, tmp_path):
    async with make_app().run_test(size=SMALL) as pilot:
        await pilot.press("x", "enter", "c")
        await pilot.pause()
        path = pilot.app.screen.query_one("#path", Input)
        path.value = "mine/scaled_loop.py"
        await pilot.press("enter")
        await pilot.pause()
        mine = work_dir / "mine" / "scaled_loop.py"
        assert mine.read_text() == STARTER
        assert pilot.app.screen.path == mine
    scratch = tmp_path / "scratch.py"
    scratch.write_text(STARTER)
    scratch_grade(scratch)  # after the app closed
    async with make_app().run_test(size=SMALL) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        screen = pilot.app.screen
        assert screen.path == mine and "Your file: ./mine/scaled_loop.py" in file_line(screen)
        assert screen.saves.watched == mine
    mine.unlink()  # gone: back to the folder's usual file, still not the scratch one
    async with make_app().run_test(size=SMALL) as pilot:
        await pilot.press("x", "enter")
        await pilot.pause()
        assert pilot.app.screen.path == work_dir / "scaled_loop.py"


# -- the starter dialog --------------------------------------------------------------------

async def test_the_starter_dialog_names_the_folder_and_a_key_typed_by_habit_adds_to_the_path(make_app, work_dir):
    async with make_app().run_test(size=SMALL) as pilot:
        await pilot.press("x", "enter", "c")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, PathScreen)
        assert str(work_dir.absolute()) in str(dialog.query_one("#path-folder", Static).render())
        path = dialog.query_one("#path", Input)
        assert path.value == "./scaled_loop.py" and path.selection.is_empty
        assert path.cursor_position == len(path.value)
        await pilot.press("g")
        assert path.value == "./scaled_loop.pyg"



def test_the_own_file_is_remembered_per_folder_and_can_be_forgotten(tmp_path):
    with Store.open() as store:
        here, there = tmp_path / "here", tmp_path / "there"
        store.set_own_file("scaled_loop", here, here / "mine" / "scaled_loop.py")
        assert store.own_file("scaled_loop", here) == here / "mine" / "scaled_loop.py"
        assert store.own_file("scaled_loop", there) is None  # started elsewhere: that folder's usual file
        assert store.own_file("other", here) is None
        store.set_own_file("scaled_loop", here, None)
        assert store.own_file("scaled_loop", here) is None
        assert store.setting("own_file:scaled_loop") is None  # nothing left behind
        store.set_setting("own_file:scaled_loop", ["not", "a", "map"])  # a damaged value reads as none
        assert store.own_file("scaled_loop", here) is None


async def test_the_apps_plot_names_its_axes_and_a_series_with_nothing_to_draw():
    """As the CLI's plot: a y label where the check gives one, and a series with no finite value (a
    stopper that never set `best`) named on the x axis, since plotext leaves it out of the legend."""
    from textual.app import App

    from quizapp.tui.widgets.charts import CurvePlot

    class One(App):
        def compose(self):
            yield CurvePlot()

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        plot = app.query_one(CurvePlot)
        seen = {}
        plot.plt.xlabel = lambda text: seen.__setitem__("x", text)
        plot.plt.ylabel = lambda text: seen.__setitem__("y", text)
        plot.show_curves({"title": "t", "x": "epoch", "y": "val loss",
                          "series": {"yours": [1.0, 0.5], "best": [float("nan"), None]}})
        await pilot.pause()
    assert seen["y"] == "val loss"
    assert seen["x"].startswith("epoch") and "best" in seen["x"] and "no value to plot" in seen["x"]
