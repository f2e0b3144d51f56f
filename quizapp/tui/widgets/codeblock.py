"""Markdown whose code blocks wrap at the edge of the pane, each continuation led by a dim mark.

Textual's own code block runs off the right edge, and nothing scrolls it by keyboard: the hidden part
can be the very token a question turns on. The cut itself is quizapp.bank.codewrap's, shared with the
command line.
"""

from __future__ import annotations

from typing import NamedTuple

from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownFence

from quizapp.bank.codewrap import CONTINUATION, code_pieces, continuation_lead

TAB_SIZE = 4
MARK_STYLE = "dim"


class Row(NamedTuple):
    """One drawn line of a code block: `code` after `lead` cells of indent and mark (none on a line's
    first row); `joiner` is what the cut dropped between it and the row before (spaces, or nothing)."""

    code: str
    lead: int
    joiner: str


class WrappedCode(Visual):
    """Highlighted code, cut to whatever width it is drawn at; a continuation keeps the styles of the
    code it continues (a comment stays a comment)."""

    def __init__(self, code: Content) -> None:
        self.code = code
        self.lines = code.split("\n", allow_blank=True)
        self._width: int | None = None
        self._drawn = Content("")
        self._rows: list[Row] = []

    def rows(self, width: int) -> tuple[Content, list[Row]]:
        """The code as drawn at `width` cells, and what each of its rows holds."""
        if width != self._width:
            drawn: list[Content] = []
            self._rows = []
            for line in self.lines:
                plain = line.plain
                lead = continuation_lead(plain, width)
                indent = lead[: len(lead) - len(CONTINUATION)]
                last_end = 0
                for number, (start, end) in enumerate(code_pieces(plain, width)):
                    piece = line[start:end]
                    if number:
                        drawn.append(Content.assemble(indent, (CONTINUATION, MARK_STYLE), piece))
                        self._rows.append(Row(piece.plain, len(lead), plain[last_end:start]))
                    else:
                        drawn.append(piece)
                        self._rows.append(Row(piece.plain, 0, ""))
                    last_end = end
            self._width, self._drawn = width, Content("\n").join(drawn)
        return self._drawn, self._rows

    def selected_text(self, width: int, selection: Selection) -> str:
        """The code under a selection of the drawn rows, the cut lines joined again and the marks left
        out: what is copied is code that runs."""
        lines: list[str] = []
        previous_selected = False
        for y, row in enumerate(self.rows(width)[1]):
            span = selection.get_span(y)
            if span is None:
                previous_selected = False
                continue
            start, end = span
            end = row.lead + len(row.code) if end == -1 else end
            part = row.code[max(0, start - row.lead): max(0, end - row.lead)]
            if row.lead and previous_selected:
                lines[-1] += row.joiner + part
            else:
                lines.append(part)
            previous_selected = True
        return "\n".join(lines)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.code.get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.rows(width)[1])

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self.rows(width)[0].render_strips(width, height, style, options)


class CodeLabel(Label):
    """The label a code block draws its code in; a selection copies the code, not the marks."""

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if isinstance(self.visual, WrappedCode):
            return self.visual.selected_text(self.size.width, selection), "\n"
        return super().get_selection(selection)


class WrappedFence(MarkdownFence):
    """A fenced (or indented) code block that wraps instead of running off screen."""

    DEFAULT_CSS = """
    WrappedFence { overflow: hidden hidden; }
    WrappedFence > CodeLabel { width: 100%; padding: 1 1; }
    """

    def __init__(self, markdown: Markdown, token, code: str) -> None:
        # A tab would be widened when drawn, after the cut was measured.
        super().__init__(markdown, token, code.expandtabs(TAB_SIZE))

    def compose(self):
        for label in super().compose():  # Textual's label, for the highlighted code it holds
            yield CodeLabel(WrappedCode(label.content), id=label.id, expand=True)

    def set_content(self, content: Content) -> None:
        super().set_content(content)
        for label in self.query(CodeLabel):
            label.update(WrappedCode(content))


class CodeMarkdown(Markdown):
    """Markdown for prompts and explanations: every code block is readable at any width."""

    BLOCKS = {**Markdown.BLOCKS, "fence": WrappedFence, "code_block": WrappedFence}
