"""A row of boxed figures with captions (due cards, new questions, streak, exercises), drawn by one widget."""

from __future__ import annotations

from rich.text import Text
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
    costs start-up time (the four boxes and their row took about 20 ms of CPU on a slow machine).
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

    def show(self, figures: list[tuple[str, str]]) -> None:
        """Set every box's (figure, caption), in the order of the titles."""
        self.figures = figures
        self.refresh()

    def render(self) -> Text:
        border = self.get_component_rich_style("tiles--border")
        title_style = self.get_component_rich_style("tiles--title")
        top, figure_line, caption_line, bottom = (Text(no_wrap=True) for _ in range(4))
        for title, (figure, caption), width in zip(self.titles, self.figures,
                                                   split_width(self.size.width, self.weights)):
            inner = width - 4  # a border and a space of padding on each side
            if inner < 1:
                continue
            label = Text(title, title_style)
            label.truncate(width - 5, overflow="ellipsis")  # "╭─ " + label + " " + at least "╮"
            top.append("╭─", border).append(" ", title_style).append_text(label).append(" ", title_style)
            top.append("─" * (width - 5 - label.cell_len) + "╮", border)
            for line, text, style in ((figure_line, figure, "bold"), (caption_line, caption, "dim")):
                cell = Text(text, style)
                cell.truncate(inner, overflow="ellipsis", pad=True)
                line.append("│ ", border).append_text(cell).append(" │", border)
            bottom.append("╰" + "─" * (width - 2) + "╯", border)
        return Text("\n").join([top, figure_line, caption_line, bottom])
