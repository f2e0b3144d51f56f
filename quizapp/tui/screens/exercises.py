"""The coding exercises: a table with each one's status (a passed one: when it is due for review) and best result."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
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
        yield Static("Exercises: write a training technique, then let the grader check what it does",
                     classes="section-title")
        yield ExerciseTable(cursor_type="row", zebra_stripes=True, id="exercises")
        yield Static(id="no-exercises")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#exercises", DataTable)
        # Figures and topic first, in full; the exercise's title last: a long title is what gets
        # clipped on a narrow terminal.
        table.add_column("status", key="status", width=21)  # "✔ passed · due in 12d"
        table.add_column("best", key="best", width=5)
        table.add_column("level", key="level", width=5)
        table.add_column("topic", key="topic", width=max((len(ex.topic) for ex in self.context.catalog.values()),
                                                          default=5))
        table.add_column("exercise", key="title")
        self.refresh_rows()
        table.focus()

    def on_screen_resume(self) -> None:
        self.refresh_rows()

    def ordered(self) -> list:
        """By topic, then the easier first: the exercises of one technique sit together."""
        return sorted(self.context.catalog.values(), key=lambda ex: (ex.topic, ex.difficulty, ex.title))

    def refresh_rows(self) -> None:
        table = self.query_one("#exercises", DataTable)
        cursor = table.cursor_row
        table.clear()
        stats = {e.exercise_id: e for e in exercise_stats(self.context.store, tuple(self.context.catalog))}
        states = exercise_schedules(self.context)
        now = self.context.now()
        for ex in self.ordered():
            s = stats.get(ex.id)
            table.add_row(exercise_status(s, due_in(states.get(ex.id), now)), best_result(s), stars(ex.difficulty),
                          ex.topic, ex.title, key=ex.id)
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))
        empty = self.query_one("#no-exercises", Static)
        empty.display = not self.context.catalog
        empty.update(self.context.catalog_error or "No exercises were found in this installation.")

    @on(DataTable.RowSelected, "#exercises")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.post_message(ExerciseRequested(event.row_key.value))
