"""The coding exercises, then the debugging drills: two tables with each one's status (a passed one: when
it is due for review) and best result; the cursor runs from the last exercise on into the drills."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from quizapp.study.stats import exercise_stats
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import ExerciseRequested
from quizapp.tui.plan import exercise_schedules
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.bars import best_result, exercise_status, stars
from quizapp.tui.widgets.titlebar import TitleBar

if TYPE_CHECKING:
    from quizapp.study.exercise_schedule import ExerciseState


def due_in(state: ExerciseState | None, now: datetime) -> str | None:
    """"now", "2d", ...: when a passed exercise is due for review; None when it is not scheduled."""
    if state is None or state.due is None:
        return None
    if state.due <= now:
        return "now"
    from quizapp.study.schedule import format_interval  # fsrs is loaded already: the schedule was replayed

    return format_interval(state.due - now)


class ExerciseTable(DataTable):
    """A list of rows: Home and End go to the first and the last exercise, as in the topics on home
    (DataTable's own Home and End scroll sideways, for wide tables).

    Enter is bound here, on the focused table, rather than as a priority binding of the screen: a
    priority key is handled as soon as it arrives, ahead of arrow keys typed before it that still
    wait in the table's queue, and would open the exercise the cursor was on before they moved it.
    """

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", id="open", tooltip="Open the highlighted exercise"),
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.row_count > 0 if action == "select_cursor" else True

    # Down on the last row and up on the first go on into the other table: the two read as one list.
    def action_cursor_down(self) -> None:
        if self.cursor_row >= self.row_count - 1 and self._other("drills") is not None:
            self._other("drills").focus()
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self.cursor_row <= 0 and self._other("exercises") is not None:
            self._other("exercises").focus()
        else:
            super().action_cursor_up()

    def _other(self, table_id: str) -> DataTable | None:
        if self.id == table_id:
            return None
        found = self.screen.query(f"#{table_id}")
        other = found.first() if found else None
        return other if other is not None and other.display and other.row_count else None


class ExercisesScreen(Screen):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back", id="back", tooltip="Back to the home screen"),
    ]

    def __init__(self, context: StudyContext) -> None:
        super().__init__()
        self.context = context

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with VerticalScroll(id="exercise-lists"):
            yield Static("Exercises: write a training technique, then let the grader check what it does",
                         classes="section-title")
            yield ExerciseTable(cursor_type="row", zebra_stripes=True, id="exercises")
            yield Static(id="no-exercises")
            yield Static("Debugging drills: a broken training script from a real bug report; fix the cause "
                         "until it trains as the fixed script does", classes="section-title", id="drills-title")
            yield ExerciseTable(cursor_type="row", zebra_stripes=True, id="drills")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        topic_width = max((len(ex.topic) for ex in self.context.catalog.values()), default=5)
        for table_id, last in (("exercises", "exercise"), ("drills", "drill")):
            table = self.query_one(f"#{table_id}", DataTable)
            # Figures and topic first, in full; the title last: a long title is what gets clipped on a
            # narrow terminal. Both tables share the widths, so their columns line up.
            table.add_column("status", key="status", width=21)  # "✔ passed · due in 12d"
            table.add_column("best", key="best", width=5)
            table.add_column("level", key="level", width=5)
            table.add_column("topic", key="topic", width=topic_width)
            table.add_column(last, key="title")
        self.refresh_rows()
        first = self.query_one("#exercises", DataTable)
        (first if first.row_count else self.query_one("#drills", DataTable)).focus()

    def on_screen_resume(self) -> None:
        self.refresh_rows()

    def ordered(self, drills: bool = False) -> list:
        """By topic, then the easier first: the exercises of one technique sit together."""
        return sorted((ex for ex in self.context.catalog.values() if ex.is_drill == drills),
                      key=lambda ex: (ex.topic, ex.difficulty, ex.title))

    def refresh_rows(self) -> None:
        stats = {e.exercise_id: e for e in exercise_stats(self.context.store, tuple(self.context.catalog))}
        states = exercise_schedules(self.context)
        now = self.context.now()
        for table_id, drills in (("exercises", False), ("drills", True)):
            table = self.query_one(f"#{table_id}", DataTable)
            cursor = table.cursor_row
            table.clear()
            for ex in self.ordered(drills):
                s = stats.get(ex.id)
                table.add_row(exercise_status(s, due_in(states.get(ex.id), now)), best_result(s),
                              stars(ex.difficulty), ex.topic, ex.list_title, key=ex.id)
            if table.row_count:
                table.move_cursor(row=min(cursor, table.row_count - 1))
            table.display = bool(table.row_count) or not drills
        self.query_one("#drills-title", Static).display = self.query_one("#drills", DataTable).display
        empty = self.query_one("#no-exercises", Static)
        empty.display = not self.context.catalog
        empty.update(self.context.catalog_error or "No exercises were found in this installation.")

    @on(DataTable.RowSelected, "#exercises, #drills")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.post_message(ExerciseRequested(event.row_key.value))
