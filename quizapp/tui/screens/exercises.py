"""The coding exercises, then the debugging drills: two tables with each one's status (a passed one: when
it is due for review; a tried one: its best result); the cursor runs from the last exercise on into the drills.

Each row leads with the title and, under it, the id the learner types (`quizapp start <id>`): the
column takes the width the others leave and wraps, so neither is ever cut. The level and the topic
columns give way on a narrow terminal (the list is grouped by topic already), and the status wraps.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from quizapp.study.plan import exercise_schedules
from quizapp.study.stats import exercise_stats
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import ExerciseRequested
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.bars import best_result, exercise_status, stars
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.panetable import PaneTable
from quizapp.tui.widgets.titlebar import TitleBar

if TYPE_CHECKING:
    from quizapp.catalog import Exercise
    from quizapp.study.exercise_schedule import ExerciseState
    from quizapp.study.stats import ExerciseStats

STATUS_WIDTH = 21  # "✔ passed · due in 12d"
NARROW_STATUS_WIDTH = 14  # "✔ passed · due", then "in 12d" under it
LEVEL_WIDTH = 5  # the header; the stars take 3
TITLE_WIDTH = 30  # narrower, a long title would take three lines or more
EDGES = 4  # the tables' margins and the list's scrollbar


def due_in(state: ExerciseState | None, now: datetime) -> str | None:
    """"now", "2d", ...: when a passed exercise is due for review; None when it is not scheduled."""
    if state is None or state.due is None:
        return None
    if state.due <= now:
        return "now"
    from quizapp.study.schedule import format_interval  # fsrs is loaded already: the schedule was replayed

    return format_interval(state.due - now)


def column_widths(width: int, *, id_width: int, topic_width: int, title_width: int) -> dict[str, int]:
    """The columns of a table `width` cells wide, by key, with their widths. The title column takes
    what the others leave, up to the longest title (`title_width`), and never less than the longest id.
    Before the title gets under TITLE_WIDTH the topic gives way, then the status narrows (it wraps),
    then the level goes."""
    roomy = max(id_width, TITLE_WIDTH)
    for others, least in (({"status": STATUS_WIDTH, "level": LEVEL_WIDTH, "topic": topic_width}, roomy),
                          ({"status": STATUS_WIDTH, "level": LEVEL_WIDTH}, roomy),
                          ({"status": NARROW_STATUS_WIDTH, "level": LEVEL_WIDTH}, roomy),
                          ({"status": NARROW_STATUS_WIDTH}, id_width)):
        left = width - sum(w + 2 for w in others.values()) - 2  # DataTable pads every cell by one either side
        if left >= least:
            return {"title": max(least, min(left, title_width)), **others}
    return {"title": id_width}


def title_cell(exercise: Exercise) -> Text:
    return Text.assemble(exercise.list_title, "\n", (exercise.id, "dim"))


def status_cell(stats: ExerciseStats | None, due: str | None) -> Text:
    """The status; under it the best result of one tried and not passed yet (a pass is the full count)."""
    text = exercise_status(stats, due)
    if stats is not None and stats.attempts and not stats.passed:
        text.append(f"\nbest {best_result(stats)}", style="dim")
    return text


class ExerciseTable(PaneTable):
    """A list of rows, in the list's scrolling pane: Home and End go to the first and the last
    exercise, as in the topics on home (DataTable's own Home and End scroll sideways, for wide tables).

    Enter is bound here, on the focused table, rather than as a priority binding of the screen: a
    priority key is handled as soon as it arrives, ahead of arrow keys typed before it that still
    wait in the table's queue, and would open the exercise the cursor was on before they moved it.
    """

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", id="open", tooltip="Open the highlighted exercise"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.row_count > 0 if action == "select_cursor" else True

    # Down on the last row and up on the first go on into the other table: the two read as one list.
    def action_cursor_down(self) -> None:
        other = self._other("drills")
        if self.cursor_row >= self.row_count - 1 and other is not None:
            self._into(other, 0)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        other = self._other("exercises")
        if self.cursor_row <= 0 and other is not None:
            self._into(other, other.row_count - 1)
        else:
            super().action_cursor_up()

    def page(self, direction: int) -> None:
        super().page(direction)
        # A page that left this table behind goes on in the other one.
        other = self._other("drills" if direction > 0 else "exercises")
        if other is not None and not self.in_view(self.cursor_row) and \
                any(other.in_view(row) for row in range(other.row_count)):
            other.highlight_in_view()
            other.focus(scroll_visible=False)

    def _into(self, other: ExerciseTable, row: int) -> None:
        other.move_cursor(row=row, scroll=False)
        other.focus(scroll_visible=False)  # the row comes into view, not the whole table's top
        other.show_cursor_row()

    def _other(self, table_id: str) -> ExerciseTable | None:
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
        self.widths: dict[str, int] = {}  # the tables' columns, by key, as laid out for the screen's width

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
        yield KeysFooter()

    def on_mount(self) -> None:
        self.lay_out()
        first = self.query_one("#exercises", ExerciseTable)
        # Not scrolled to the table's top: the list's heading stays in view above it.
        (first if first.row_count else self.query_one("#drills", ExerciseTable)).focus(scroll_visible=False)

    def on_resize(self, event: events.Resize) -> None:
        self.lay_out()

    def lay_out(self) -> None:
        """Columns for the screen's width, the same in both tables so that they line up; then the rows
        again, when the widths changed (a row's height follows its wrapped cells when it is added)."""
        exercises = self.context.catalog.values()
        widths = column_widths((self.size.width or self.app.size.width) - EDGES,
                               id_width=max((len(ex.id) for ex in exercises), default=10),
                               topic_width=max((len(ex.topic) for ex in exercises), default=5),
                               title_width=max((len(ex.list_title) for ex in exercises), default=10))
        if widths == self.widths:
            return
        self.widths = widths
        cursors = {}
        for table_id, label in (("exercises", "exercise"), ("drills", "drill")):
            table = self.query_one(f"#{table_id}", ExerciseTable)
            cursors[table_id] = table.cursor_row
            table.clear(columns=True)
            for key, width in widths.items():
                table.add_column(label if key == "title" else key, key=key, width=width)
        self.refresh_rows(cursors)
        focused = self.focused
        if isinstance(focused, ExerciseTable):
            focused.call_after_refresh(focused.show_cursor_row)

    def on_screen_resume(self) -> None:
        self.refresh_rows()

    def ordered(self, drills: bool = False) -> list:
        """By topic, then the easier first: the exercises of one technique sit together."""
        return sorted((ex for ex in self.context.catalog.values() if ex.is_drill == drills),
                      key=lambda ex: (ex.topic, ex.difficulty, ex.title))

    def refresh_rows(self, cursors: dict[str, int] | None = None) -> None:
        """The rows anew, each table's cursor on the row it was on (or, by table id, on `cursors`)."""
        stats = {e.exercise_id: e for e in exercise_stats(self.context.store, tuple(self.context.catalog))}
        states = exercise_schedules(self.context.store, self.context.catalog)
        now = self.context.now()
        for table_id, drills in (("exercises", False), ("drills", True)):
            table = self.query_one(f"#{table_id}", ExerciseTable)
            cursor = (cursors or {}).get(table_id, table.cursor_row)
            table.clear()
            for ex in self.ordered(drills):
                cells = {"title": title_cell(ex), "status": status_cell(stats.get(ex.id), due_in(states.get(ex.id), now)),
                         "level": stars(ex.difficulty), "topic": ex.topic}
                table.add_row(*(cells[key] for key in self.widths), key=ex.id, height=None)
            if table.row_count:
                table.move_cursor(row=min(cursor, table.row_count - 1), scroll=False)
            table.display = bool(table.row_count) or not drills
        self.query_one("#drills-title", Static).display = self.query_one("#drills", ExerciseTable).display
        empty = self.query_one("#no-exercises", Static)
        empty.display = not self.context.catalog
        empty.update(self.context.catalog_error or "No exercises were found in this installation.")

    @on(DataTable.RowSelected, "#exercises, #drills")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.post_message(ExerciseRequested(event.row_key.value))
