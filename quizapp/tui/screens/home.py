"""Home: what is due, what is new, the streak, mastery per topic, exercise progress."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

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


def topic_row(mastery: Text, percent: str, due: str, new: str, title: str) -> Text:
    """One line of the topics list; figures first, so a narrow terminal clips only the title."""
    cell = Text(no_wrap=True, overflow="ellipsis")
    cell.append_text(mastery)
    cell.append(" " * max(0, 20 - mastery.cell_len) + f" {percent:>4} {due:>3} {new:>3}  ")
    cell.append(title)
    return cell


class HomeScreen(Screen):
    BINDINGS = [
        Binding("r", "app.review", "Review", id="review", tooltip="Study the cards due now, then new questions"),
        Binding("enter", "study_topic", "Study topic", id="study-topic", priority=True,
                tooltip="Study the topic highlighted in the list"),
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
            yield Static(topic_row(Text("mastery"), "", "due", "new", "topic"), id="topics-header", classes="dim")
            # An OptionList, not a DataTable: the same rows at a quarter of the start-up cost.
            yield OptionList(id="topics")
            yield Static(id="empty-bank")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.refresh_figures()
        self.query_one("#topics", OptionList).focus()

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
        table = self.query_one("#topics", OptionList)
        cursor = table.highlighted or 0
        table.clear_options()
        table.add_options(Option(topic_row(bar(t.mastery), f"{t.mastery:.0%}", str(t.due or "-"),
                                           str(t.questions - t.seen or "-"), t.title), id=t.slug)
                          for t in stats.topics)
        if table.option_count:
            table.highlighted = min(cursor, table.option_count - 1)
        table.display = bool(stats.topics)
        self.query_one("#topics-title").display = bool(stats.topics)
        self.query_one("#topics-header").display = bool(stats.topics)
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
        table = self.query_one("#topics", OptionList)
        if table.highlighted is not None:
            self.post_message(StudyRequested(table.get_option_at_index(table.highlighted).id))

    def action_interview(self) -> None:
        from quizapp.tui.screens.interview_setup import start_interview

        start_interview(self.app, self.context)

    def action_bank_problems(self) -> None:
        from quizapp.tui.screens.problems import BankProblemsScreen

        self.app.push_screen(BankProblemsScreen(self.context.bank.errors))

    @on(OptionList.OptionSelected, "#topics")
    def _study_topic(self, event: OptionList.OptionSelected) -> None:
        self.post_message(StudyRequested(event.option.id))
