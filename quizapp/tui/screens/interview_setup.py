"""Before a mock interview: how many minutes, and which topics (none ticked: all of them)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widgets import Button, Input, SelectionList, Static
from textual.widgets.selection_list import Selection

from quizapp.interview.plan import DEFAULT_MINUTES, EXERCISE_FROM_MINUTES, MAX_MINUTES, MIN_MINUTES, exercise_promise
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.footer import KeysFooter

MIN_TOPIC_ROWS, MAX_TOPIC_ROWS = 3, 8  # the topic list's height, its border included


@dataclass(frozen=True)
class InterviewRequest:
    minutes: int
    topics: tuple[str, ...]  # empty: every topic


class InterviewSetupScreen(ModalScreen[InterviewRequest | None]):
    CSS_PATH = SCREENS_CSS

    # The topics' label is the list's border title and what the minutes give sits beside them, so the
    # dialog stays short; the list gets the rows that are left (fit_topics) and scrolls.
    DEFAULT_CSS = """
    InterviewSetupScreen #setup-minutes-row { height: auto; margin-bottom: 1; }
    InterviewSetupScreen #setup-minutes-label { width: auto; padding: 1 1 0 0; }
    InterviewSetupScreen #minutes { width: 9; }
    InterviewSetupScreen #setup-plan { width: 1fr; padding: 0 0 0 1; }
    InterviewSetupScreen #setup-topics { height: auto; max-height: 8; }
    """

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="start", tooltip="Start the interview and its clock"),
        Binding("escape", "dismiss(None)", "Cancel", id="cancel", tooltip="Back without an interview"),
    ]

    def __init__(self, topics: list[tuple[str, str]], *, exercise_topics: frozenset[str] | None = None) -> None:
        super().__init__()
        self.topics = topics  # (slug, title)
        # Topics that have a coding exercise; None: not known, so the minutes alone decide.
        self.exercise_topics = exercise_topics

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="interview-setup"):
            yield Static("Mock interview", classes="dialog-title")
            yield Static(f"Questions weighted to your weakest and least seen topics; from {EXERCISE_FROM_MINUTES} "
                         "minutes on, a coding exercise ends it. Unanswered questions count as missed.")
            with Horizontal(id="setup-minutes-row"):
                yield Static(f"Minutes ({MIN_MINUTES}-{MAX_MINUTES})", id="setup-minutes-label")
                yield Input(str(DEFAULT_MINUTES), type="integer", id="minutes", max_length=3)
                yield Static(id="setup-plan")
            topics = SelectionList[str](*(Selection(title, slug) for slug, title in self.topics), id="setup-topics")
            topics.border_title = "Topics: tick some to narrow it (none ticked: all)"
            yield topics
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start (ctrl+s)", id="start", variant="primary")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#minutes", Input).focus()
        self.show_plan()

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_topics)

    def fit_topics(self) -> None:
        """Give the topic list the rows the dialog has left under its 90% height, so the buttons stay on
        screen (at 80x24 too); the list scrolls for the rest."""
        dialog = self.query_one("#interview-setup")
        topics = self.query_one("#setup-topics", SelectionList)
        room = Size(self.size.width, self.size.height - self.query_one(KeysFooter).outer_size.height)
        limit = dialog.styles.max_height
        tallest = int(limit.resolve(room, self.app.size)) if limit is not None else room.height
        others = sum(child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
                     for child in dialog.children if child is not topics)
        chrome = dialog.outer_size.height - dialog.size.height
        rows = tallest - chrome - others
        topics.styles.max_height = max(MIN_TOPIC_ROWS, min(MAX_TOPIC_ROWS, rows))

    @property
    def minutes(self) -> int | None:
        """The minutes typed, when they are a whole number in range."""
        typed = self.query_one("#minutes", Input).value.strip()
        return int(typed) if typed.isdecimal() and MIN_MINUTES <= int(typed) <= MAX_MINUTES else None

    @on(Input.Changed, "#minutes")
    @on(SelectionList.SelectedChanged, "#setup-topics")
    def show_plan(self) -> None:
        """Say what the interview will hold for the minutes and topics chosen: make_plan keeps to it."""
        minutes = self.minutes
        if minutes is None:
            text = f"A whole number from {MIN_MINUTES} to {MAX_MINUTES}."
        else:
            text = exercise_promise(minutes, exercise_available=self.exercise_available())
        self.query_one("#setup-plan", Static).update(text)

    def exercise_available(self) -> bool:
        if self.exercise_topics is None:
            return True
        chosen = set(self.query_one("#setup-topics", SelectionList).selected)
        return bool(self.exercise_topics & chosen) if chosen else bool(self.exercise_topics)

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
        minutes = self.minutes
        if minutes is None:
            self.notify(f"Minutes: a whole number from {MIN_MINUTES} to {MAX_MINUTES}.", severity="warning")
            return
        chosen = self.query_one("#setup-topics", SelectionList).selected
        self.dismiss(InterviewRequest(minutes, tuple(chosen)))


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

    bank = context.bank
    topics = [(slug, topic.title) for slug, topic in bank.topics.items() if topic.questions]
    # As make_plan sees it: an exercise counts when its topic is in the bank (none ticked: every bank topic).
    exercise_topics = frozenset(ex.topic for ex in context.catalog.values() if ex.topic in bank.topics)
    app.push_screen(InterviewSetupScreen(topics, exercise_topics=exercise_topics), chosen)
