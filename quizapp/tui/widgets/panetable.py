"""A table as tall as its rows, inside a pane that scrolls: the table's keys scroll the pane.

DataTable keeps its cursor in view by scrolling itself, but a table of auto height never scrolls:
the pane around it (with the text above and below the table) has to follow instead. Without this,
Down moves the cursor off the screen and PageDown, PageUp, Home and End change nothing on it.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import DataTable


class PaneTable(DataTable):
    """Down and Up move the cursor and bring its row into view; on a row taller than what is left of
    the view they scroll on through it first, and past the first or the last row they scroll on to
    what is above or below the table. PageDown and PageUp scroll the pane a page and highlight the
    first row in view. Home and End go to the first and the last row."""

    # All of its rows, always: the pane is what scrolls (DataTable caps itself at its container's
    # height and would scroll inside the pane, a second scrollbar in the first).
    DEFAULT_CSS = """
    PaneTable { height: auto; max-height: initial; }
    """

    BINDINGS = [
        Binding("home", "scroll_top", "First", show=False, tooltip="Go to the first row"),
        Binding("end", "scroll_bottom", "Last", show=False, tooltip="Go to the last row"),
    ]

    @property
    def pane(self) -> ScrollableContainer | None:
        """The nearest container around the table that scrolls."""
        return next((node for node in self.ancestors if isinstance(node, ScrollableContainer)), None)

    def _top_in(self, pane: ScrollableContainer) -> int:
        """Where the table starts in the pane's content: each widget's virtual region is relative to its
        parent and does not move as the pane scrolls."""
        y, node = 0, self
        while node is not pane and node is not None:
            y += node.virtual_region.y
            node = node.parent
        return y

    def row_span(self, index: int) -> tuple[int, int]:
        """The first line of a row and the line after its last, in the pane's content."""
        pane = self.pane
        rows = self.ordered_rows
        top = (self._top_in(pane) if pane is not None else 0) + (self.header_height if self.show_header else 0)
        top += sum(row.height for row in rows[:index])
        return top, top + rows[index].height

    def _view(self, pane: ScrollableContainer) -> tuple[int, int]:
        top = round(pane.scroll_y)
        return top, top + pane.scrollable_content_region.height

    def scroll_pane_to(self, y: int) -> None:
        """Scroll the pane (at once) so that line `y` of its content is its first in view."""
        pane = self.pane
        if pane is not None:
            pane.scroll_to(y=max(0, min(y, round(pane.max_scroll_y))), animate=False, immediate=True)

    def show_lines(self, top: int, bottom: int) -> None:
        """Scroll the pane the least that shows lines top..bottom of its content; their top when they
        do not all fit."""
        pane = self.pane
        if pane is None:
            return
        start, end = self._view(pane)
        bottom = min(bottom, top + end - start)
        if top < start:
            self.scroll_pane_to(top)
        elif bottom > end:
            self.scroll_pane_to(bottom - (end - start))

    def show_cursor_row(self, *, with_top: bool = False) -> None:
        """Bring the highlighted row into view; `with_top`: with everything above it too, when that fits
        (the pane's first lines say what the table is)."""
        pane = self.pane
        if pane is None or not self.row_count:
            return
        top, bottom = self.row_span(self.cursor_row)
        start, end = self._view(pane)
        if with_top and bottom <= end - start:
            self.scroll_pane_to(0)
        else:
            self.show_lines(top, bottom)

    def _scroll_lines(self, lines: int) -> None:
        pane = self.pane
        if pane is not None:
            self.scroll_pane_to(round(pane.scroll_y) + lines)

    def in_view(self, index: int) -> bool:
        """Whether any line of the row shows."""
        if self.pane is None:
            return True
        start, end = self._view(self.pane)
        top, bottom = self.row_span(index)
        return top < end and bottom > start

    def action_cursor_down(self) -> None:
        if self.pane is None or not self.row_count:
            super().action_cursor_down()
            return
        row = self.cursor_row
        _, bottom = self.row_span(row)
        _, end = self._view(self.pane)
        if self.in_view(row) and bottom > end:  # the rest of this row's message first
            self._scroll_lines(1)
        elif row >= self.row_count - 1:
            if self.in_view(row):
                self._scroll_lines(1)  # on to what follows the table
            else:
                self.show_cursor_row()
        else:
            self.move_cursor(row=row + 1, scroll=False)
            self.show_cursor_row()

    def action_cursor_up(self) -> None:
        if self.pane is None or not self.row_count:
            super().action_cursor_up()
            return
        row = self.cursor_row
        top, _ = self.row_span(row)
        start, _ = self._view(self.pane)
        if self.in_view(row) and top < start:
            self._scroll_lines(-1)
        elif row <= 0:
            if self.in_view(row):
                self._scroll_lines(-1)  # back to what is above the table
            else:
                self.show_cursor_row()
        else:
            self.move_cursor(row=row - 1, scroll=False)
            self.show_cursor_row()

    def action_page_down(self) -> None:
        self.page(1)

    def action_page_up(self) -> None:
        self.page(-1)

    def page(self, direction: int) -> None:
        """Scroll the pane a page down (1) or up (-1) and highlight a row in view."""
        pane = self.pane
        if pane is None:
            (super().action_page_down if direction > 0 else super().action_page_up)()
            return
        start, end = self._view(pane)
        self.scroll_pane_to(start + direction * (end - start))
        if round(pane.scroll_y) == start and self.row_count:  # at the pane's edge already: the last or first row
            edge = self.row_count - 1 if direction > 0 else 0
            if self.in_view(edge):
                self.move_cursor(row=edge, scroll=False)
                return
        self.highlight_in_view()

    def highlight_in_view(self) -> None:
        """The first row that starts in view, else the one that covers the view's top; the last or the
        first row when the view is below or above the table."""
        if not self.row_count:
            return
        start, end = self._view(self.pane)
        spans = [self.row_span(index) for index in range(self.row_count)]
        starting = [i for i, (top, _) in enumerate(spans) if start <= top < end]
        covering = [i for i, (top, bottom) in enumerate(spans) if top < start < bottom]
        if starting or covering:
            target = (starting or covering)[0]
        else:
            target = self.row_count - 1 if spans[-1][1] <= start else 0
        self.move_cursor(row=target, scroll=False)

    def action_scroll_top(self) -> None:
        if not self.row_count:
            self.scroll_pane_to(0)
            return
        self.move_cursor(row=0, scroll=False)
        self.show_cursor_row(with_top=True)

    def action_scroll_bottom(self) -> None:
        pane = self.pane
        if not self.row_count:
            if pane is not None:
                self.scroll_pane_to(round(pane.max_scroll_y))
            return
        last = self.row_count - 1
        self.move_cursor(row=last, scroll=False)
        if pane is None:
            return
        top, bottom = self.row_span(last)
        start, end = self._view(pane)
        if pane.virtual_size.height - top <= end - start:  # with all that follows the table
            self.scroll_pane_to(round(pane.max_scroll_y))
        else:
            self.show_lines(top, bottom)
