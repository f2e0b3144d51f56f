"""A card's key points as a checklist: the learner ticks what their answer covered."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from quizapp.study.keypoints import rating_from_key_points
from quizapp.study.schedule import RATING_NAMES
from quizapp.tui.widgets.answers import RowList, row_grid


class KeyPointList(RowList):
    """Space (or a click) ticks a point; Enter saves the rating, as everywhere else on a rated answer;
    `covered` and `suggested` say what the ticks mean.

    A long point wraps: the learner must read the whole of what they tick. The list sits under the
    model answer, often below the fold of a small terminal while it has the focus: a move or a tick
    brings it into view, and PageDown, PageUp and End scroll the pane around it first, the list itself
    once the pane can go no further that way."""

    DEFAULT_CSS = """
    KeyPointList {
        height: auto; max-height: 12; margin: 0 1; padding: 0; overflow-y: auto;
        border: round $primary 50%;
    }
    KeyPointList:focus { border: round $primary; }
    KeyPointList > .row.-ticked { color: $text-success; }
    """

    BINDINGS = [
        Binding("up", "move(-1)", "Previous point", show=False),
        Binding("down", "move(1)", "Next point", show=False),
        Binding("space", "tick", "Tick", show=False),
        Binding("enter", "accept", "Save rating", show=False),
        Binding("home", "move_to(0)", "First point", show=False),
        Binding("end", "to_end", "Scroll to the end", show=False),
        Binding("pagedown", "page(1)", "Scroll down", show=False),
        Binding("pageup", "page(-1)", "Scroll up", show=False),
    ]

    @dataclass
    class SelectedChanged(Message):
        """A point was ticked or unticked."""

        points: KeyPointList

        @property
        def control(self) -> KeyPointList:
            return self.points

    def __init__(self, points: tuple[str, ...], *, id: str | None = None) -> None:
        self.points = points
        self.ticked: set[int] = set()
        super().__init__(len(points), id=id)
        self.set_reactive(KeyPointList.cursor, 0)
        self.border_title = "Key points: tick what your answer covered"

    def row(self, index: int) -> Table:
        return row_grid("[x]" if index in self.ticked else "[ ]", self.points[index])

    def refresh_rows(self) -> None:
        super().refresh_rows()
        for index, widget in enumerate(self.query(".row")):
            widget.set_class(index in self.ticked, "-ticked")

    @property
    def selected(self) -> list[int]:
        return sorted(self.ticked)

    @property
    def covered(self) -> list[int]:
        return self.selected

    @property
    def suggested(self) -> int:
        return rating_from_key_points(len(self.ticked), len(self.points))

    def summary(self) -> Text:
        """e.g. `2 of 4 covered: Hard`."""
        return Text.assemble(f"{len(self.ticked)} of {len(self.points)} covered: ",
                             (RATING_NAMES[self.suggested], "bold"))

    def action_tick(self) -> None:
        if self.cursor is None:
            return
        self.ticked ^= {self.cursor}
        self.refresh_rows()
        self.into_view()
        self.post_message(self.SelectedChanged(self))

    def watch_cursor(self, cursor: int | None) -> None:
        self.refresh_rows()
        self.into_view()

    def into_view(self) -> None:
        """The whole list on screen where it fits, and the point under the cursor in any case."""
        self.screen.scroll_to_widget(self, animate=False, immediate=True)
        if self.cursor is not None:
            self.screen.scroll_to_widget(self.query(".row")[self.cursor], animate=False, immediate=True)

    def action_accept(self) -> None:
        """Enter saves the rating on a screen that has one (the quiz); elsewhere (the interview) it goes
        on to the screen's own Enter."""
        confirm = getattr(self.screen, "action_confirm", None)
        if confirm is None:
            raise SkipAction()
        confirm()

    def action_move_to(self, index: int) -> None:
        self.cursor = max(0, min(self.count - 1, index))

    def pane(self) -> Widget | None:
        """The nearest container around the list that has something to scroll."""
        return next((node for node in self.ancestors if isinstance(node, Widget) and node.allow_vertical_scroll),
                    None)

    def action_page(self, pages: int) -> None:
        pane = self.pane()
        if pane is not None and (pane.scroll_y < pane.max_scroll_y if pages > 0 else pane.scroll_y > 0):
            (pane.scroll_page_down if pages > 0 else pane.scroll_page_up)(animate=False)
        else:
            self.action_move_to(self.count - 1 if pages > 0 else 0)

    def action_to_end(self) -> None:
        pane = self.pane()
        if pane is not None and pane.scroll_y < pane.max_scroll_y:
            pane.scroll_end(animate=False)
        else:
            self.action_move_to(self.count - 1)

    def on_click(self, event: events.Click) -> None:
        rows = list(self.query(".row"))
        if event.widget in rows:
            self.cursor = rows.index(event.widget)
            self.action_tick()
