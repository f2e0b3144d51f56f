"""Edit a solution file inside the app: a Python TextArea, ctrl+s saves, Escape closes."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static, TextArea

from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.screens.dialogs import ConfirmScreen
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.titlebar import TitleBar


class CodeArea(TextArea):
    """A code editor that leaves Escape to its screen.

    Textual's code editor takes Escape to move the focus on. Binding it on the screen with priority
    would close too early: a priority key is handled as soon as it arrives, before keys typed just
    ahead of it have reached the editor, so a fast "x", Escape would close without the x and without
    asking about it. Passed on from here, Escape reaches the screen's binding in its turn.
    """

    def _on_key(self, event: events.Key) -> None:
        # Textual runs the key handler of every class in the MRO; prevent_default skips TextArea's
        # for Escape alone, and the key still bubbles up to the screen.
        if event.key == "escape":
            event.prevent_default()


class EditorScreen(Screen[bool]):
    """Returns whether the file was saved at least once."""

    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="save", tooltip="Write the file"),
        Binding("escape", "close", "Close", id="close", tooltip="Back to the exercise"),
    ]

    def __init__(self, path: Path, label: str) -> None:
        super().__init__()
        self.path = path
        self.label = label
        self.saved_text = path.read_text(encoding="utf-8")
        self.saved_once = False

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(f"Editing {self.label}", id="editor-title", classes="section-title")
        yield CodeArea.code_editor(self.saved_text, language="python", id="code")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#code", TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one("#code", TextArea).text

    def action_save(self) -> None:
        try:
            self.path.write_text(self.text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not save {self.label}: {exc.strerror or exc}", severity="error")
            return
        self.saved_text = self.text
        self.saved_once = True
        self.notify(f"Saved {self.label}", timeout=2)

    def action_close(self) -> None:
        if self.text == self.saved_text:
            self.dismiss(self.saved_once)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(self.saved_once)

        self.app.push_screen(ConfirmScreen("You have unsaved changes. Close and lose them?", "Lose them", "Keep editing"),
                             answered)
