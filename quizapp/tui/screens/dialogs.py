"""Small modal dialogs; each returns its answer through `dismiss`."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from quizapp.study.stats import TopicStats
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.bars import bar
from quizapp.tui.widgets.footer import KeysFooter


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
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PathScreen(ModalScreen[str | None]):
    """Ask for a file path, prefilled; Enter accepts it. `folder`: where a relative path starts, said in
    full (a prefilled ./x.py does not say which folder . is)."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="Keep things as they are")]

    def __init__(self, prompt: str, value: str, *, folder: Path | None = None) -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.prompt)
            if self.folder is not None:
                yield Static(Text.assemble((".", "bold"), " is ", (str(self.folder), "bold"),
                                           ", the folder quizapp was started in."), id="path-folder")
            # The cursor at the end, nothing selected: a key typed by habit (g) adds to the path
            # instead of replacing it.
            yield Input(self.value, id="path", select_on_focus=False)
            yield Static("Enter accepts, Escape cancels.", classes="dim")
        yield KeysFooter()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class NoteScreen(ModalScreen[str | None]):
    """Flag a question: ask for the learner's note (may be empty); Enter flags, Escape cancels (None)."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", tooltip="Do not flag it")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.prompt)
            yield Input(self.value, placeholder="What looks wrong or unclear? (optional)", max_length=2000, id="note")
            yield Static("Enter flags it, Escape cancels. `quizapp stats --flags` lists your flags.", classes="dim")
        yield KeysFooter()

    @on(Input.Submitted, "#note")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())


class TopicScreen(ModalScreen[str | None]):
    """Pick a topic to study; returns its slug. Typing filters the list (every word typed must be in
    the title or the slug), ↑↓ move, Enter studies the highlighted topic."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel", tooltip="Back without studying"),
        Binding("down", "move('down')", "Next", show=False),
        Binding("up", "move('up')", "Previous", show=False),
        Binding("pagedown", "move('page_down')", "Page down", show=False),
        Binding("pageup", "move('page_up')", "Page up", show=False),
    ]

    def __init__(self, topics: list[TopicStats]) -> None:
        super().__init__()
        self.topics = topics

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Study a topic", classes="dialog-title")
            yield Input(placeholder="Type to filter the topics", id="topic-filter")
            yield OptionList(*self.options(""), id="topic-list")
            yield Static("↑↓ move, Enter studies, Escape cancels.", classes="dim")
        yield KeysFooter()

    def on_mount(self) -> None:
        topics = self.query_one("#topic-list", OptionList)
        topics.highlighted = 0 if topics.option_count else None
        self.query_one("#topic-filter", Input).focus()

    def options(self, typed: str) -> list[Option]:
        words = typed.lower().split()
        shown = []
        for t in self.topics:
            if all(word in f"{t.title} {t.slug}".lower() for word in words):
                label = Text.assemble(bar(t.mastery, 10), f" {t.title}",
                                      (f"  {t.due} due · {t.new} new", "dim"))
                shown.append(Option(label, id=t.slug))
        return shown

    @on(Input.Changed, "#topic-filter")
    def _filter(self, event: Input.Changed) -> None:
        topics = self.query_one("#topic-list", OptionList)
        topics.clear_options()
        topics.add_options(self.options(event.value) or [Option(Text("No topic matches.", style="dim"),
                                                                disabled=True)])
        topics.highlighted = 0 if topics.option_count and not topics.get_option_at_index(0).disabled else None

    def action_move(self, where: str) -> None:
        getattr(self.query_one("#topic-list", OptionList), f"action_cursor_{where}")()

    @on(Input.Submitted, "#topic-filter")
    def _typed_enter(self, event: Input.Submitted) -> None:
        topics = self.query_one("#topic-list", OptionList)
        if topics.highlighted is not None and not topics.get_option_at_index(topics.highlighted).disabled:
            self.dismiss(topics.get_option_at_index(topics.highlighted).id)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
