"""How wide the code in a question's Markdown is, for `quizapp bank check`'s warnings.

A code line longer than CODE_WIDTH is still shown whole (wrapped, with a continuation mark), but
a learner reads code best as it was written, so the bank keeps its code within an 80-column
terminal: a code block takes a column of padding each side, and a list item indents it two more.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len

CODE_WIDTH = 76
TAB_SIZE = 4


class WideLine(NamedTuple):
    index: int  # 0-based line of the text
    width: int  # in terminal cells, the block's own indent left out


def _fence(line: str) -> str | None:
    """The fence a line opens or closes a code block with (``` or ~~~, three or more), if any."""
    stripped = line.lstrip(" ")
    for char in "`~":
        run = len(stripped) - len(stripped.lstrip(char))
        if run >= 3:
            return char * run
    return None


def wide_code_lines(text: str, limit: int = CODE_WIDTH) -> list[WideLine]:
    """The lines of fenced code blocks in Markdown `text` wider than `limit` cells.

    The width is counted from the fence's own indent (a block inside a list item is indented in
    the file, not on screen), tabs as TAB_SIZE columns. A block left open runs to the end, as
    Markdown reads it.
    """
    wide = []
    fence, indent = None, 0
    for index, raw in enumerate(text.split("\n")):
        line = raw.expandtabs(TAB_SIZE)
        marker = _fence(line)
        if fence is None:
            if marker is not None:
                fence, indent = marker, len(line) - len(line.lstrip(" "))
            continue
        if marker is not None and marker[0] == fence[0] and len(marker) >= len(fence) \
                and not line.strip().lstrip(fence[0]):
            fence = None
            continue
        own = line[min(indent, len(line) - len(line.lstrip(" "))):].rstrip()
        width = cell_len(own)
        if width > limit:
            wide.append(WideLine(index, width))
    return wide
