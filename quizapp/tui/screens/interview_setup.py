"""Before a mock interview: how many minutes, and which topics (none ticked: all of them)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, SelectionList, Static
from textual.widgets.selection_list import Selection

from quizapp.interview.plan import DEFAULT_MINUTES, MAX_MINUTES, MIN_MINUTES
from quizapp.tui.screens import SCREENS_CSS


@dataclass(frozen=True)
class InterviewRequest:
    minutes: int
    topics: tuple[str, ...]  # empty: every topic


class InterviewSetupScreen(ModalScreen[InterviewRequest | None]):
    CSS_PATH = SCREENS_CSS

    # Fifteen topics must not push the buttons off a 30-line terminal: the list scrolls instead.
    DEFAULT_CSS = """
    InterviewSetupScreen #setup-topics { height: auto; max-height: 8; }
    InterviewSetupScreen #interview-setup > Static { margin-bottom: 0; }
    InterviewSetupScreen #minutes { width: 12; }
    """

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="start", tooltip="Start the interview and its clock"),
        Binding("escape", "dismiss(None)", "Cancel", id="cancel", tooltip="Back without an interview"),
    ]

    def __init__(self, topics: list[tuple[str, str]]) -> None:
        super().__init__()
        self.topics = topics  # (slug, title)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="interview-setup"):
            yield Static("Mock interview", classes="dialog-title")
            yield Static("Questions across topics, weighted to your weakest and least seen, then one coding "
                         "exercise with a time box. Unanswered questions count as missed when time is up.")
            yield Static(f"Minutes ({MIN_MINUTES}-{MAX_MINUTES})")
            yield Input(str(DEFAULT_MINUTES), type="integer", id="minutes", max_length=3)
            yield Static("Topics (tick some to narrow it; none ticked: all)")
            yield SelectionList[str](*(Selection(title, slug) for slug, title in self.topics), id="setup-topics")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start (ctrl+s)", id="start", variant="primary")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#minutes", Input).focus()

    @on(Input.Submitted, "#minutes")
    def _submitted(self) -> None:
        self.action_start()

    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        self.action_start()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    def action_start(self) -> None:
        typed = self.query_one("#minutes", Input).value.strip()
        if not typed.isdecimal() or not MIN_MINUTES <= int(typed) <= MAX_MINUTES:
            self.notify(f"Minutes: a whole number from {MIN_MINUTES} to {MAX_MINUTES}.", severity="warning")
            return
        chosen = self.query_one("#setup-topics", SelectionList).selected
        self.dismiss(InterviewRequest(int(typed), tuple(chosen)))


def start_interview(app, context) -> None:
    """Ask for minutes and topics, plan the interview, and open it (or say why it cannot start)."""
    from quizapp.interview import Interview, PlanError, make_plan
    from quizapp.tui.screens.interview import InterviewScreen

    def chosen(request: InterviewRequest | None) -> None:
        if request is None:
            return
        try:
            plan = make_plan(context.bank, context.store, context.catalog, minutes=request.minutes,
                             topics=request.topics, now=context.now())
        except PlanError as exc:
            app.notify(f"The interview cannot start: {exc}.", severity="warning")
            return
        app.push_screen(InterviewScreen(context, Interview(plan, context.bank, context.store, clock=context.clock)))

    topics = [(slug, topic.title) for slug, topic in context.bank.topics.items() if topic.questions]
    app.push_screen(InterviewSetupScreen(topics), chosen)
