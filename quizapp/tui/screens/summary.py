"""The end of a quiz: how it went, and what is next."""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static

from quizapp.study.due import asked_words
from quizapp.study.schedule import RATING_NAMES
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import StudyRequested
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.session import SessionResult
from quizapp.tui.widgets.answers import inline_text
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.titlebar import TitleBar

# Asterisks only: underscores stay, since prompts name things like __init__ without backticks.
_EMPHASIS = re.compile(r"(\*\*)(.+?)\1|(?<![\w*])\*(?![\s*])(.+?)(?<![\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def first_line(markdown: str, width: int = 76) -> str:
    """A prompt's first line as plain text (emphasis and links unwrapped; `code` is kept for
    inline_text to style), cut to `width`."""
    line = next((s.strip() for s in markdown.splitlines() if s.strip()), "")
    line = _LINK.sub(r"\1", line)
    line = _EMPHASIS.sub(lambda m: m.group(2) or m.group(3), line)
    return line if len(line) <= width else line[: width - 1] + "…"


class SummaryScreen(Screen):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("enter,escape,q", "app.pop_screen", "Home", tooltip="Back to the home screen"),
        Binding("r", "again", "Study more", tooltip="Start another session with what is due and new"),
    ]

    def __init__(self, context: StudyContext, result: SessionResult) -> None:
        super().__init__()
        self.context = context
        self.result = result

    def compose(self) -> ComposeResult:
        answered = self.result.first_tries  # a re-ask after Again is counted once, below
        checked = [a for a in answered if a.correct is not None]
        right = sum(1 for a in checked if a.correct)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        table.add_row("Answered", f"{len(answered)} of {self.result.total}")
        if checked:
            table.add_row("Right", f"{right} of {len(checked)} checked ({right / len(checked):.0%})")
        cards = len(answered) - len(checked)
        if cards:
            table.add_row("Cards", f"{cards} self-rated")
        if self.result.reasks:
            table.add_row("Again", f"{self.result.reasks} re-ask{'s' if self.result.reasks != 1 else ''} "
                                   "of questions rated Again")
        table.add_row("Ratings", "  ".join(f"{name} {sum(1 for a in self.result.answered if a.rating == r)}"
                                           for r, name in RATING_NAMES.items()))
        missed = [a.question for a in checked if not a.correct]
        stats = self.context.stats()
        table.add_row("Now", f"{stats.due} due{asked_words(stats.asked)} · {stats.new} new")
        yield TitleBar()
        with Vertical(id="summary"):
            yield Static(Text(f"{self.result.title}: session done", style="bold"), classes="section-title")
            yield Static(table)
            if missed:
                yield Static(Text("To look at again", style="bold"), classes="section-title")
                yield Static(Text("\n").join(inline_text(f"✘ {first_line(q.prompt)}") for q in missed))
            yield Static("Every answer is saved. Enter goes home; r studies more.", classes="dim")
        yield KeysFooter()

    def action_again(self) -> None:
        self.app.pop_screen()
        self.app.post_message(StudyRequested(self.result.topic))
