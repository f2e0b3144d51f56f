"""How a learner gives an answer: pick choices, arrange items, or type.

Every answer widget has `response()` (what `check_answer` takes, or None while nothing is given)
and `show_result(question)` (mark what was right once the answer is checked, and lock it).
"""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Static

from quizapp.bank.model import Question
from quizapp.bank.shuffle import choice_order, item_order

_CODE = re.compile(r"`([^`]+)`")


def inline_text(source: str, style: str = "") -> Text:
    """Plain text with `code` spans styled, for choices and items (no full Markdown needed)."""
    text = Text(style=style)
    last = 0
    for match in _CODE.finditer(source):
        text.append(source[last:match.start()])
        text.append(match.group(1), style="bold")
        last = match.end()
    text.append(source[last:])
    return text


def row_grid(marker: str, body: str) -> Table:
    """A marker, then the body wrapped beside it: a long body never runs off the edge."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=len(marker), no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(Text(marker), inline_text(body))  # a str cell is read as markup: "[x]" would vanish as a tag
    return grid


class RowList(Widget, can_focus=True):
    """A focusable list of rows with a cursor; subclasses say what a row shows."""

    DEFAULT_CSS = """
    RowList { height: auto; padding: 0 0 1 0; }
    RowList > .row { height: auto; padding: 0 1; }
    RowList > .row.-cursor { background: $boost; }
    RowList:focus > .row.-cursor { background: $accent 35%; }
    RowList > .row.-picked { text-style: bold; }
    RowList > .row.-right { color: $text-success; }
    RowList > .row.-wrong { color: $text-error; }
    RowList:disabled > .row.-cursor { background: transparent; }
    """

    cursor: reactive[int | None] = reactive(None, init=False)

    def __init__(self, size: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.count = size

    def compose(self):
        for index in range(self.count):
            yield Static(self.row(index), classes="row")

    def row(self, index: int) -> Table:
        raise NotImplementedError

    def refresh_rows(self) -> None:
        for index, widget in enumerate(self.query(".row").results(Static)):
            widget.update(self.row(index))
            widget.set_class(index == self.cursor, "-cursor")

    def watch_cursor(self, cursor: int | None) -> None:
        self.refresh_rows()
        if cursor is not None:
            self.query(".row")[cursor].scroll_visible()

    def action_move(self, step: int) -> None:
        start = -1 if self.cursor is None and step > 0 else (self.count if self.cursor is None else self.cursor)
        self.cursor = max(0, min(self.count - 1, start + step))


class ChoiceAnswer(RowList):
    """single: the highlighted choice is the answer; multi: space or a number toggles a choice.

    Rows are shown in a shuffled order (`order[row]` is the file index); the response, the marks
    and what is stored stay in file order.
    """

    BINDINGS = [
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("down", "move(1)", "Next", show=False),
        Binding("space", "pick_cursor", "Pick", show=False),
        *(Binding(str(n), f"pick({n - 1})", f"Choice {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, question: Question, seed: str = "", *, id: str | None = None) -> None:
        self.question = question
        self.multi = question.type == "multi"
        self.order = choice_order(question, seed)
        self.picked: set[int] = set()  # rows
        self.marks: dict[int, str] = {}  # row -> "right" | "wrong", once checked
        super().__init__(len(question.choices), id=id)
        if self.multi:
            self.set_reactive(ChoiceAnswer.cursor, 0)

    def row(self, index: int) -> Table:
        mark = {"right": "✔", "wrong": "✘"}.get(self.marks.get(index, ""), " ")
        if self.multi:
            box = "[x]" if index in self.picked else "[ ]"
        else:
            box = "(•)" if index == self.cursor else "( )"
        return row_grid(f"{mark} {box} {index + 1}.", self.question.choices[self.order[index]])

    def refresh_rows(self) -> None:
        super().refresh_rows()
        for index, widget in enumerate(self.query(".row")):
            widget.set_class(index in self.picked or (not self.multi and index == self.cursor), "-picked")
            widget.set_class(self.marks.get(index) == "right", "-right")
            widget.set_class(self.marks.get(index) == "wrong", "-wrong")

    def action_pick(self, index: int) -> None:
        if index >= self.count:
            return
        if self.multi:
            self.picked ^= {index}
        self.cursor = index
        self.refresh_rows()

    def action_pick_cursor(self) -> None:
        if self.cursor is not None:
            self.action_pick(self.cursor)

    def response(self):
        if self.multi:
            return sorted(self.order[row] for row in self.picked) or None
        return None if self.cursor is None else self.order[self.cursor]

    def show_result(self, question: Question) -> None:
        right = set(question.answer) if self.multi else {question.answer}
        rows = self.picked if self.multi else {self.cursor}
        self.marks = {row: "right" for row in range(self.count) if self.order[row] in right}
        self.marks |= {row: "wrong" for row in rows if row is not None and self.order[row] not in right}
        self.refresh_rows()
        self.disabled = True


class OrderAnswer(RowList):
    """Arrange the items: arrows move the cursor, shift+arrows move the item under it."""

    BINDINGS = [
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("down", "move(1)", "Next", show=False),
        Binding("shift+up,ctrl+up,u", "shift(-1)", "Move up", tooltip="Move the highlighted item up"),
        Binding("shift+down,ctrl+down,d", "shift(1)", "Move down", tooltip="Move the highlighted item down"),
    ]

    def __init__(self, question: Question, seed: str = "", *, id: str | None = None) -> None:
        self.question = question
        self.arrangement = item_order(question, seed)
        self.checked = False
        super().__init__(len(question.items), id=id)
        self.set_reactive(OrderAnswer.cursor, 0)

    def row(self, index: int) -> Table:
        mark = " "
        if self.checked:
            mark = "✔" if self.arrangement[index] == index else "✘"
        return row_grid(f"{mark} {index + 1}.", self.question.items[self.arrangement[index]])

    def refresh_rows(self) -> None:
        super().refresh_rows()
        if self.checked:
            for index, widget in enumerate(self.query(".row")):
                widget.set_class(self.arrangement[index] == index, "-right")
                widget.set_class(self.arrangement[index] != index, "-wrong")

    def action_shift(self, step: int) -> None:
        here = self.cursor or 0
        there = here + step
        if 0 <= there < self.count:
            items = self.arrangement
            items[here], items[there] = items[there], items[here]
            self.cursor = there
            self.refresh_rows()

    def response(self):
        return list(self.arrangement)

    def show_result(self, question: Question) -> None:
        self.checked = True
        self.refresh_rows()
        self.disabled = True


class TypedAnswer(Input):
    """numeric and text answers: type, then Enter."""

    BINDINGS = [Binding("enter", "submit", "Check", tooltip="Check your answer")]

    PLACEHOLDERS = {
        "numeric": "A number, e.g. 0.5, 1e-5, 2^-14, 1/3 or 65,536",
        "text": "Your answer",
    }

    def __init__(self, question: Question, *, id: str | None = None) -> None:
        super().__init__(placeholder=self.PLACEHOLDERS.get(question.type, ""), id=id)
        self.question = question

    def response(self):
        return self.value.strip() or None

    def show_result(self, question: Question) -> None:
        self.disabled = True


class CardAnswer(Static, can_focus=True):
    """An open question: the learner answers in their head, then reveals the model answer."""

    def __init__(self, question: Question, *, id: str | None = None) -> None:
        super().__init__("Answer in your head or on paper, then press Enter to see the model answer.", id=id)

    def response(self):
        return None  # nothing to check: the learner rates themselves

    def show_result(self, question: Question) -> None:
        self.display = False


def answer_widget(question: Question, seed: str = "") -> Widget:
    if question.type in ("single", "multi"):
        return ChoiceAnswer(question, seed, id="answer")
    if question.type == "order":
        return OrderAnswer(question, seed, id="answer")
    if question.type == "card":
        return CardAnswer(question, id="answer")
    return TypedAnswer(question, id="answer")
