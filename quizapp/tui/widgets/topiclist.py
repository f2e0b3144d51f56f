"""The home screen's list of topics: one line a topic, a highlighted row, Enter or a click to study it."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Leave, MouseMove
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class TopicList(Widget, can_focus=True):
    """A cursor over pre-rendered rows, drawn as one block of text.

    Textual's OptionList renders and caches each option on its own; for the twenty-odd rows of the
    first screen that cost about 20 ms of CPU at start-up on a slow machine. This widget draws every
    row in one pass and leaves scrolling to its container (on home, the screen itself).
    """

    DEFAULT_CSS = """
    TopicList {
        height: auto;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    TopicList > .topic-list--cursor {
        background: $block-cursor-blurred-background;
        text-style: $block-cursor-blurred-text-style;
    }
    TopicList:focus > .topic-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    TopicList > .topic-list--hover {
        background: $block-hover-background;
    }
    """

    COMPONENT_CLASSES = {"topic-list--cursor", "topic-list--hover"}

    BINDINGS = [
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("home", "move_to(0)", "First", show=False),
        Binding("end", "move_to(-1)", "Last", show=False),
    ]

    highlighted: reactive[int] = reactive(0)
    _hover: reactive[int | None] = reactive(None)

    class Selected(Message):
        """A topic was chosen, by Enter (bound by the screen) or by a click."""

        def __init__(self, topic_list: TopicList, slug: str) -> None:
            super().__init__()
            self.topic_list = topic_list
            self.slug = slug

        @property
        def control(self) -> TopicList:
            return self.topic_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[tuple[str, Text]] = []

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def highlighted_slug(self) -> str | None:
        return self._rows[self.highlighted][0] if self._rows else None

    def set_rows(self, rows: list[tuple[str, Text]]) -> None:
        """Replace the rows (slug, line); the cursor stays on the same index, clamped."""
        self._rows = rows
        self.highlighted = min(self.highlighted, max(0, len(rows) - 1))
        self.refresh(layout=True)

    def render(self) -> Text:
        width = self.size.width  # no padding or border here; content_region asks the compositor for a layout
        lines = []
        for index, (_, row) in enumerate(self._rows):
            style = ("topic-list--cursor" if index == self.highlighted
                     else "topic-list--hover" if index == self._hover else None)
            if style:
                # A base style under the row's own colours, across the whole width, as OptionList draws it.
                row = row.copy()
                row.style = self.get_component_rich_style(style)
                row.pad_right(width - row.cell_len)
            lines.append(row)
        return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)

    def watch_highlighted(self, row: int) -> None:
        if self._rows and self.parent is not None and self.parent.is_scrollable:
            # Keep the cursor's row on screen: the container scrolls (on home, the screen itself), this
            # widget is as tall as its rows; dock_gutter keeps the row clear of a docked title bar or footer.
            if row == 0:  # back at the top: show what is above the list too (home's tiles)
                self.parent.scroll_home(animate=False)
                return
            top = self.virtual_region.y
            self.parent.scroll_to_region(Region(0, top + row, self.size.width, 1), spacing=self.dock_gutter,
                                         animate=False)

    def action_move(self, step: int) -> None:
        if self._rows:
            self.highlighted = max(0, min(len(self._rows) - 1, self.highlighted + step))

    def action_move_to(self, row: int) -> None:
        if self._rows:
            self.highlighted = row % len(self._rows)

    def select_highlighted(self) -> None:
        if self._rows:
            self.post_message(self.Selected(self, self._rows[self.highlighted][0]))

    def on_click(self, event: Click) -> None:
        if 0 <= event.y < len(self._rows):
            self.highlighted = event.y
            self.select_highlighted()

    def on_mouse_move(self, event: MouseMove) -> None:
        self._hover = event.y if 0 <= event.y < len(self._rows) else None

    def on_leave(self, event: Leave) -> None:
        self._hover = None
