"""A question's text in the terminal (rich): code that stays readable at any width, and inline code
in choices drawn as code rather than as raw backticks.

rich's own Markdown wraps a long code line at the edge like prose, so the rest of a comment lands
at column 0 and reads as a new line of code. Here every continuation is led by its line's indent
and a dim mark (the cut itself is `quizapp.bank.codewrap`'s, shared with the app).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from quizapp.bank.codewidth import TAB_SIZE
from quizapp.bank.codewrap import CONTINUATION, code_pieces, continuation_lead

PAD = 1  # cells of background around a code block, as rich's own code blocks have
MARK_STYLE = "dim"
INLINE_CODE_STYLE = "markdown.code"
# A code span: a run of backticks, then anything up to a run of the same length (CommonMark).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


class WrappedCodeBlock(CodeBlock):
    """A highlighted code block whose long lines continue under a dim mark instead of at column 0."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip().expandtabs(TAB_SIZE)
        width = max(1, options.max_width - 2 * PAD)
        highlighted = Syntax(code, self.lexer_name, theme=self.theme).highlight(code)
        rows = []
        for line in highlighted.split("\n", allow_blank=True)[: code.count("\n") + 1]:
            rows.extend(code_rows(line, width))
        body = Text("\n").join(rows)
        body.no_wrap = True
        background = Syntax.get_theme(self.theme).get_background_style()
        yield Padding(body, pad=PAD, style=background, expand=True)


def code_rows(line: Text, width: int) -> list[Text]:
    """One highlighted code line as the rows it takes at `width` cells, styles kept."""
    plain = line.plain
    lead = continuation_lead(plain, width)
    indent = lead[: len(lead) - len(CONTINUATION)]
    rows = []
    for number, (start, end) in enumerate(code_pieces(plain, width)):
        piece = line[start:end]
        rows.append(Text.assemble(indent, (CONTINUATION, MARK_STYLE), piece) if number else piece)
    return rows


class QuestionMarkdown(Markdown):
    """Markdown as rich draws it, but with code blocks that wrap visibly (see WrappedCodeBlock)."""

    elements = {**Markdown.elements, "fence": WrappedCodeBlock, "code_block": WrappedCodeBlock}


def inline_text(text: str) -> Text:
    """One line of a choice, an item or a key point: `code` spans styled as code, without their
    backticks; everything else literal (square brackets are text here, never console markup)."""
    out = Text()
    at = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(text[at:span.start()])
        code = span.group(2)
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]  # CommonMark drops one space each side, so `` `x` `` can quote a backtick
        out.append(code, style=INLINE_CODE_STYLE)
        at = span.end()
    out.append(text[at:])
    return out


def numbered(labels: Iterable[str], texts: Iterable[str], indent: int = 2) -> Padding:
    """A list of `label. text` rows whose wrapped lines stay under their text, not under the label."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, text in zip(labels, texts):
        grid.add_row(Text(f"{label}.", style="bold"), inline_text(text))
    return Padding(grid, (0, 0, 0, indent), expand=False)
