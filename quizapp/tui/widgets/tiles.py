"""A row of boxed figures with captions (due cards, new questions, streak, exercises), drawn by one widget."""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget


def split_width(width: int, weights: tuple[int, ...]) -> list[int]:
    """Widths in proportion to weights that add up to width exactly, as Textual shares out fr units."""
    total, edges = sum(weights), [0]
    for seen in range(1, len(weights) + 1):
        edges.append(width * sum(weights[:seen]) // total)
    return [b - a for a, b in zip(edges, edges[1:])]


class Tiles(Widget):
    """Rounded boxes, each with its title in the top border, a bold figure and a dim caption.

    One widget, not a row of four bordered Statics in a container: every widget on the first screen
    costs start-up time (the four boxes and their row took about 20 ms of CPU on a slow machine). Its
    lines go to the screen through Textual's line API, without the conversion of a render() result.
    """

    DEFAULT_CSS = """
    Tiles {
        height: 4;
    }
    Tiles > .tiles--border {
        color: $primary;
    }
    Tiles > .tiles--title {
        color: $foreground;
    }
    """

    COMPONENT_CLASSES = {"tiles--border", "tiles--title"}

    def __init__(self, titles: list[str], weights: tuple[int, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.titles = titles
        self.weights = weights
        self.figures: list[tuple[str, str]] = [("", "")] * len(titles)
        self._strips: tuple[int, list[Strip]] | None = None  # (width, the lines drawn at that width)

    def show(self, figures: list[tuple[str, str]]) -> None:
        """Set every box's (figure, caption), in the order of the titles."""
        self.figures = figures
        self._strips = None
        self.refresh()

    def notify_style_update(self) -> None:
        self._strips = None  # the theme changed: the colours must be looked up again
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._strips is None or self._strips[0] != width:
            style = self.visual_style.rich_style
            self._strips = (width, [Strip(line.render(self.app.console)).extend_cell_length(width).apply_style(style)
                                    for line in self._lines(width)])
        strips = self._strips[1]
        return strips[y] if y < len(strips) else Strip.blank(width, self.visual_style.rich_style)

    def _lines(self, width: int) -> list[Text]:
        border = self.get_component_rich_style("tiles--border")
        title_style = self.get_component_rich_style("tiles--title")
        top, figure_line, caption_line, bottom = (Text(no_wrap=True) for _ in range(4))
        for title, (figure, caption), box in zip(self.titles, self.figures, split_width(width, self.weights)):
            inner = box - 4  # a border and a space of padding on each side
            if inner < 1:
                continue
            label = Text(title, title_style)
            label.truncate(box - 5, overflow="ellipsis")  # "╭─ " + label + " " + at least "╮"
            top.append("╭─", border).append(" ", title_style).append_text(label).append(" ", title_style)
            top.append("─" * (box - 5 - label.cell_len) + "╮", border)
            for line, text, style in ((figure_line, figure, "bold"), (caption_line, caption, "dim")):
                cell = Text(text, style)
                cell.truncate(inner, overflow="ellipsis", pad=True)
                line.append("│ ", border).append_text(cell).append(" │", border)
            bottom.append("╰" + "─" * (box - 2) + "╯", border)
        return [top, figure_line, caption_line, bottom]
