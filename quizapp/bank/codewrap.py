"""Code lines cut to a width, each continuation led by a visible mark.

A code block cut at the edge can hide the very token a question turns on, and a plain wrap makes the
rest of a comment read like a line of code. Pure text: the app and the command line both draw the
pieces, each with its own styles (`Content.divide`, `Text.divide` or slices of the highlighted line).
"""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size

CONTINUATION = "↪ "  # leads each continuation, after the line's own indent; drawn dim
_AFTER = ",;([{"  # a cut just after one of these reads as a natural pause in code
_BEFORE = ".=+-*/"  # ...or just before one of these


def continuation_lead(line: str, width: int) -> str:
    """What goes before every piece of `line` but the first: its indent, then CONTINUATION. A deep
    indent is cut to half the width, so that a continuation keeps room for code."""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    room = max(0, width // 2 - cell_len(CONTINUATION))
    return indent[:room] + CONTINUATION


def code_pieces(line: str, width: int) -> list[tuple[int, int]]:
    """`(start, end)` offsets of the pieces `line` is cut into so that the first fits in `width` cells
    and every other, after `continuation_lead`, fits too; one piece when the line fits. A cut goes at a
    space where one is near the edge (the spaces at a cut are dropped), else at punctuation, else
    anywhere."""
    if width <= 0 or cell_len(line) <= width:
        return [(0, len(line))]
    lead = cell_len(continuation_lead(line, width))
    indent_end = len(line) - len(line.lstrip(" \t"))
    pieces = []
    start = 0
    while True:
        room = width if not pieces else max(1, width - lead)
        end, used = start, 0
        while end < len(line) and used + get_character_cell_size(line[end]) <= room:
            used += get_character_cell_size(line[end])
            end += 1
        end = max(end, start + 1)  # a character wider than the room still takes a piece of its own
        if end >= len(line):
            pieces.append((start, len(line)))
            return pieces
        cut = _cut(line, max(start, indent_end if not pieces else start), end, room)
        piece_end = cut
        while piece_end > start and line[piece_end - 1] in " \t":
            piece_end -= 1
        pieces.append((start, piece_end if piece_end > start else cut))
        start = cut
        while start < len(line) and line[start] in " \t":
            start += 1
        if start >= len(line):
            return pieces


def _cut(line: str, low: int, end: int, room: int) -> int:
    """Where the piece that could run to `end` is cut: at the last space, else after or before
    punctuation, when that keeps at least a third of the room; else at `end`."""
    shortest = low + max(1, room // 3)
    if line[end] in " \t":
        return end
    for at in range(end - 1, shortest - 1, -1):
        if line[at] in " \t":
            return at + 1
    for at in range(end, shortest - 1, -1):
        if line[at - 1] in _AFTER or line[at] in _BEFORE:
            return at
    return end


def wrap_code(code: str, width: int) -> list[str]:
    """`code`'s lines cut to `width` cells, each continuation led by `continuation_lead` (plain text)."""
    lines = []
    for line in code.expandtabs(4).split("\n"):
        lead = continuation_lead(line, width)
        for number, (start, end) in enumerate(code_pieces(line, width)):
            lines.append((lead if number else "") + line[start:end])
    return lines
