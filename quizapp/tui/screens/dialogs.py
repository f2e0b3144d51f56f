"""Small modal dialogs; each returns its answer through `dismiss`."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from quizapp.study.stats import TopicStats
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.bars import bar


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; No is the default."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", tooltip="Yes"),
        Binding("n,escape", "answer(False)", "No", tooltip="No"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.labels = (yes, no)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.labels[0]} (y)", id="yes", variant="warning")
                yield Button(f"{self.labels[1]} (n)", id="no", variant="primary")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PathScreen(ModalScreen[str | None]):
    """Ask for a file path, prefilled; Enter accepts it."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="Keep things as they are")]

    def __init__(self, prompt: str, value: str) -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.prompt)
            yield Input(self.value, id="path")
            yield Static("Enter accepts, Escape cancels.", classes="dim")
        yield Footer(compact=True)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class TopicScreen(ModalScreen[str | None]):
    """Pick a topic to study; returns its slug."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="Back without studying")]

    def __init__(self, topics: list[TopicStats]) -> None:
        super().__init__()
        self.topics = topics

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Study a topic", classes="dialog-title")
            options = []
            for t in self.topics:
                label = Text.assemble(bar(t.mastery, 10), f" {t.title}",
                                      (f"  {t.due} due · {t.questions - t.seen} new", "dim"))
                options.append(Option(label, id=t.slug))
            yield OptionList(*options, id="topic-list")
        yield Footer(compact=True)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
