"""The home screen's list of topics: one line a topic, a highlighted row, Enter or a click to study it."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Leave, MouseMove
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget


class TopicList(Widget, can_focus=True):
    """A cursor over pre-rendered rows, each drawn straight to a line of the screen.

    Home draws this list on the first frame, so it is built for start-up time. Textual's OptionList
    renders and caches each option on its own (about 20 ms of CPU for the twenty-odd rows on a slow
    machine). Returning the rows as one text from render() costs less, but still has Textual measure
    that text for the widget's height and convert every styled span. Here the height is the number
    of lines, and render_line (Textual's line API) turns a row's text into segments directly. The
    heading (a title and the column names) is drawn as the first lines rather than by a widget of its
    own, and scrolling is left to the container (on home, the screen itself).
    """

    DEFAULT_CSS = """
    TopicList {
        height: auto;
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
    TopicList > .topic-list--title {
        color: $text-accent;
        text-style: bold;
    }
    TopicList > .topic-list--columns {
        color: $text-muted;
    }
    """

    COMPONENT_CLASSES = {"topic-list--cursor", "topic-list--hover", "topic-list--title", "topic-list--columns"}

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

    def __init__(self, title: str = "", columns: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._heading = [(line, style) for line, style in ((title, "topic-list--title"),
                                                            (columns, "topic-list--columns")) if line]
        self._rows: list[tuple[str, Text]] = []

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def heading_height(self) -> int:
        """Lines drawn above the first row."""
        return len(self._heading)

    @property
    def highlighted_slug(self) -> str | None:
        return self._rows[self.highlighted][0] if self._rows else None

    def set_rows(self, rows: list[tuple[str, Text]]) -> None:
        """Replace the rows (slug, line); the cursor stays on its topic (else on the same index,
        clamped). The same rows again draw nothing: a periodic refresh costs no repaint."""
        if rows == self._rows:
            return
        slug = self.highlighted_slug
        slugs = [row_slug for row_slug, _ in rows]
        resized = len(rows) != len(self._rows)
        self._rows = rows
        self.highlighted = slugs.index(slug) if slug in slugs else min(self.highlighted, max(0, len(rows) - 1))
        self.refresh(layout=resized)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._heading) + len(self._rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width  # no padding or border: the content is the whole widget
        style = self.visual_style.rich_style
        if y < len(self._heading):
            line, component = self._heading[y]
            text = Text(line)
        elif (index := y - len(self._heading)) < len(self._rows):
            text = self._rows[index][1].copy()
            component = ("topic-list--cursor" if index == self.highlighted
                         else "topic-list--hover" if index == self._hover else None)
        else:
            return Strip.blank(width, style)
        if component:
            style += self.get_component_rich_style(component)
        text.truncate(width, overflow="ellipsis", pad=True)
        # The style goes under the row's own colours and across the whole width (the cursor's
        # background too, as OptionList draws it).
        return Strip(text.render(self.app.console), width).apply_style(style)

    def watch_highlighted(self, row: int) -> None:
        if self._rows and self.parent is not None and self.parent.is_scrollable:
            # Keep the cursor's row on screen: the container scrolls (on home, the screen itself), this
            # widget is as tall as its rows; dock_gutter keeps the row clear of a docked title bar or footer.
            if row == 0:  # back at the top: show what is above the list too (home's tiles)
                self.parent.scroll_home(animate=False)
                return
            top = self.virtual_region.y + self.heading_height
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

    def _row_at(self, y: int) -> int | None:
        row = y - self.heading_height
        return row if 0 <= row < len(self._rows) else None

    def on_click(self, event: Click) -> None:
        if (row := self._row_at(event.y)) is not None:
            self.highlighted = row
            self.select_highlighted()

    def on_mouse_move(self, event: MouseMove) -> None:
        self._hover = self._row_at(event.y)

    def on_leave(self, event: Leave) -> None:
        self._hover = None
