"""What the app shows when its data cannot be used as it is: a broken progress store, bad question files."""

from __future__ import annotations

import os

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from quizapp.bank.model import BankError
from quizapp.study.store import StoreError
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.titlebar import TitleBar

# In DEFAULT_CSS, not screens.tcss: the store problem can be the first screen, whose CSS_PATH
# Textual does not read.
PROBLEM_CSS = """
.problem { padding: 1 2; }
.problem > Static { margin-bottom: 1; }
.problem-title { text-style: bold; color: $text-error; }
"""


def shown(path) -> str:
    """Relative to the current folder when inside it, as the learner would type it."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel


class StoreProblemScreen(Screen):
    """The progress database is corrupt or from a newer quizapp: say so and where, change nothing."""

    DEFAULT_CSS = PROBLEM_CSS

    BINDINGS = [Binding("q,escape", "leave", "Quit", tooltip="Leave quizapp; the file is left as it is")]

    def __init__(self, error: StoreError) -> None:
        super().__init__()
        self.error = error

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Vertical(id="store-problem", classes="problem"):
            yield Static("Your progress database cannot be used", classes="problem-title")
            yield Static(Text(self.error.reason))
            yield Static(Text.assemble(("Database: ", "bold"), shown(self.error.path)))
            yield Static("Nothing was changed or wiped. Move the file away to start afresh, restore it from a "
                         "backup, upgrade quizapp if the file is from a newer version, or set QUIZAPP_HOME to "
                         "use another folder.")
        yield KeysFooter()

    def action_leave(self) -> None:
        self.app.exit(1, return_code=1)


class BankProblemsScreen(ModalScreen[None]):
    """Every problem found in the question files, as `file:line: reason`."""

    CSS_PATH = SCREENS_CSS
    DEFAULT_CSS = PROBLEM_CSS

    BINDINGS = [Binding("escape,b,q", "dismiss", "Close", tooltip="Back to the home screen")]

    def __init__(self, errors: list[BankError]) -> None:
        super().__init__()
        self.errors = errors

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Problems in question files (those files were skipped)", classes="problem-title")
            with VerticalScroll():
                for error in self.errors:
                    yield Static(Text.assemble((f"{shown(error.path)}:{error.line}", "bold"), f": {error.reason}"))
            yield Static("Fix them and restart, or run `quizapp bank check` for the same list.", classes="dim")
        yield KeysFooter()
