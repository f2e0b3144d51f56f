"""Home: what is due, what is new, the streak, mastery per topic, exercise progress."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from quizapp import paths
from quizapp.study.stats import Stats
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import StudyRequested
from quizapp.tui.widgets.bars import bar


class Tile(Static):
    """A boxed figure with a caption."""

    DEFAULT_CSS = """
    Tile { border: round $primary; padding: 0 1; height: 4; width: 1fr; }
    Tile.-wide { width: 2fr; }
    """

    def __init__(self, title: str, *, id: str, classes: str = "") -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = title

    def show(self, figure: str, caption: str) -> None:
        self.update(Text.assemble((figure, "bold"), "\n", (caption, "dim")))


class HomeScreen(Screen):
    BINDINGS = [
        Binding("r", "app.review", "Review", id="review", tooltip="Study the cards due now, then new questions"),
        Binding("enter", "study_topic", "Study topic", id="study-topic", priority=True,
                tooltip="Study the topic highlighted in the table"),
        Binding("t", "app.pick_topic", "Topic", id="topic", tooltip="Pick a topic to study"),
        Binding("x", "app.exercises", "Exercises", id="exercises", tooltip="Open the coding exercises"),
        Binding("i", "interview", "Interview", id="interview",
                tooltip="A timed mock interview: questions, one exercise, a report card"),
        Binding("s", "app.stats", "Stats", id="stats", tooltip="Charts and tables of your progress"),
        Binding("b", "bank_problems", "Bank problems", id="bank-problems",
                tooltip="List the problems found in question files"),
        Binding("q", "app.quit", "Quit", id="quit", tooltip="Leave quizapp (your progress is saved)"),
    ]

    def __init__(self, context: StudyContext) -> None:
        super().__init__()
        self.context = context

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="home"):
            yield Static(id="banner")
            with Horizontal(id="tiles"):
                yield Tile("Due now", id="tile-due")
                yield Tile("New", id="tile-new")
                yield Tile("Streak", id="tile-streak")
                yield Tile("Exercises", id="tile-exercises", classes="-wide")
            yield Static("Mastery per topic", id="topics-title", classes="section-title")
            yield DataTable(cursor_type="row", zebra_stripes=True, id="topics")
            yield Static(id="empty-bank")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#topics", DataTable)
        # Figures first: a long topic title is what gets clipped on a narrow terminal.
        table.add_column("mastery", key="mastery", width=20)
        table.add_column("", key="percent", width=4)
        table.add_column("due", key="due", width=3)
        table.add_column("new", key="new", width=3)
        table.add_column("topic", key="topic")
        self.refresh_figures()
        table.focus()

    def on_screen_resume(self) -> None:
        self.refresh_figures()

    def refresh_figures(self) -> None:
        stats = self.context.stats()
        self._show_tiles(stats)
        self._show_topics(stats)
        self._show_banner()

    def _show_tiles(self, stats: Stats) -> None:
        # Captions stay within 12 characters: a tile is that narrow at 80 columns.
        self.query_one("#tile-due", Tile).show(str(stats.due), "cards")
        self.query_one("#tile-new", Tile).show(str(stats.new), "questions")
        days = f"{stats.streak_days} day" + ("" if stats.streak_days == 1 else "s")
        today = "done today" if stats.studied_today else ("study today" if stats.streak_days else "start today")
        self.query_one("#tile-streak", Tile).show(days, today)
        passed = sum(1 for e in stats.exercises if e.passed)
        attempted = sum(1 for e in stats.exercises if e.attempts and not e.passed)
        fresh = sum(1 for e in stats.exercises if not e.attempts)
        self.query_one("#tile-exercises", Tile).show(f"{passed} passed", f"{attempted} attempted · {fresh} not started")

    def _show_topics(self, stats: Stats) -> None:
        table = self.query_one("#topics", DataTable)
        cursor = table.cursor_row
        table.clear()
        for t in stats.topics:
            table.add_row(bar(t.mastery), Text(f"{t.mastery:.0%}", justify="right"), Text(str(t.due or "-"), justify="right"),
                          Text(str(t.questions - t.seen or "-"), justify="right"), t.title, key=t.slug)
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))
        table.display = bool(stats.topics)
        self.query_one("#topics-title").display = bool(stats.topics)
        empty = self.query_one("#empty-bank", Static)
        empty.display = not stats.topics
        empty.update(f"No questions to study. Question packs are read from the shipped bank and from "
                     f"{paths.user_questions_dir()}.")

    def _show_banner(self) -> None:
        problems = []
        if self.context.bank.errors:
            files = len({e.path for e in self.context.bank.errors})
            problems.append(f"⚠ {len(self.context.bank.errors)} problem(s) in {files} question file(s); "
                            "those files were skipped. Press b to see them.")
        if self.context.catalog_error:
            problems.append(f"⚠ {self.context.catalog_error}")
        banner = self.query_one("#banner", Static)
        banner.update("\n".join(problems))
        banner.display = bool(problems)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bank_problems":
            return bool(self.context.bank.errors)
        if action == "study_topic":
            return bool(self.context.bank.topics)
        return True

    def action_study_topic(self) -> None:
        table = self.query_one("#topics", DataTable)
        if table.row_count:
            self.post_message(StudyRequested(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def action_interview(self) -> None:
        from quizapp.tui.screens.interview_setup import start_interview

        start_interview(self.app, self.context)

    def action_bank_problems(self) -> None:
        from quizapp.tui.screens.problems import BankProblemsScreen

        self.app.push_screen(BankProblemsScreen(self.context.bank.errors))

    @on(DataTable.RowSelected, "#topics")
    def _study_topic(self, event: DataTable.RowSelected) -> None:
        self.post_message(StudyRequested(event.row_key.value))
