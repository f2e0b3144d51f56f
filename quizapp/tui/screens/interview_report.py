"""The report card after a mock interview: the same tables as `quizapp interview` prints."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from quizapp.interview.render import exercise_lines, headline, question_table, study_next_text, topic_table
from quizapp.interview.report import ReportCard
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import StudyRequested
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.titlebar import TitleBar


class InterviewReportScreen(Screen):
    CSS_PATH = SCREENS_CSS

    DEFAULT_CSS = """
    InterviewReportScreen #iv-report { padding: 0 1; }
    InterviewReportScreen #iv-report > Static { margin-bottom: 1; }
    """

    BINDINGS = [
        Binding("escape,q,enter", "app.pop_screen", "Home", id="home", tooltip="Back to the home screen"),
        Binding("n", "study_next", "Study next", id="study-next",
                tooltip="Study the first topic the report card suggests"),
        Binding("s", "stats", "Stats", id="interview-stats", tooltip="Your interview scores over time"),
    ]

    def __init__(self, context: StudyContext, card: ReportCard) -> None:
        super().__init__()
        self.context = context
        self.card = card

    def compose(self) -> ComposeResult:
        card = self.card
        yield TitleBar()
        with VerticalScroll(id="iv-report"):
            yield Static(Text("Report card", style="bold"), classes="section-title")
            yield Static(headline(card), id="iv-headline")
            yield Static(study_next_text(card), id="iv-study-next")
            yield Static(topic_table(card), id="iv-topics")
            yield Static(question_table(card), id="iv-questions")
            lines = exercise_lines(card)
            if lines is not None:
                yield Static(lines, id="iv-exercise")
        yield KeysFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "study_next":
            return bool(self.card.study_next)
        return True

    def action_study_next(self) -> None:
        if self.card.study_next:
            self.app.pop_screen()
            self.app.post_message(StudyRequested(self.card.study_next[0]))

    def action_stats(self) -> None:
        from quizapp.tui.screens.stats import StatsScreen

        self.app.switch_screen(StatsScreen(self.context, tab="interviews"))
