"""A row of boxed figures with captions (due cards, new questions, streak, exercises), drawn by one widget."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget


def split_width(width: int, weights: tuple[int, ...]) -> list[int]:
    """Widths in proportion to weights that add up to width exactly, as Textual shares out fr units."""
    total, edges = sum(weights), [0]
    for seen in range(1, len(weights) + 1):
        edges.append(width * sum(weights[:seen]) // total)
    return [b - a for a, b in zip(edges, edges[1:])]


Words = str | Sequence[str]  # a text, or its wordings from the longest to the shortest


def wordings(words: Words) -> tuple[str, ...]:
    return (words,) if isinstance(words, str) else tuple(words) or ("",)


def pick(tile: tuple[tuple[str, ...], ...], level: int) -> tuple[str, ...]:
    """A tile's (title, figure, caption) at a wording level; a part with fewer wordings keeps its shortest."""
    return tuple(part[min(level, len(part) - 1)] for part in tile)


def box_need(title: str, figure: str, caption: str) -> int:
    """The narrowest box that shows all three whole: a border and a space each side, and the title
    between "╭─ " and " ─╮" in the top border."""
    return max(cell_len(title) + 5, cell_len(figure) + 4, cell_len(caption) + 4)


def fit_tiles(width: int, weights: tuple[int, ...], tiles: list[tuple[tuple[str, ...], ...]]) -> tuple[list[int], list[int]]:
    """(box widths, which wording of each tile) for `tiles`, each (titles, figures, captions) with
    their wordings longest first. The boxes are shared out by weight when every first wording fits
    them; else each tile gets what its wording needs and the rest by weight, the widest tile taking a
    shorter wording until the row fits. When even the shortest do not fit, by weight, clipped."""
    levels = [max(len(part) for part in tile) for tile in tiles]
    shares = split_width(width, weights)
    chosen = [0] * len(tiles)
    needs = [box_need(*pick(tile, 0)) for tile in tiles]
    if all(need <= share for need, share in zip(needs, shares)):
        return shares, chosen
    while sum(needs) > width:
        shorter = [(need, n) for n, need in enumerate(needs) if chosen[n] + 1 < levels[n]]
        if not shorter:
            return shares, chosen
        _, n = max(shorter)
        chosen[n] += 1
        needs[n] = box_need(*pick(tiles[n], chosen[n]))
    for n in range(len(tiles)):  # the room left may take a longer wording of a tile shortened early on
        while chosen[n] and sum(needs) - needs[n] + (longer := box_need(*pick(tiles[n], chosen[n] - 1))) <= width:
            chosen[n] -= 1
            needs[n] = longer
    extra = split_width(width - sum(needs), weights)
    return [need + more for need, more in zip(needs, extra)], chosen


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

    def __init__(self, titles: list[Words], weights: tuple[int, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.titles = [wordings(title) for title in titles]
        self.weights = weights
        self._wordings: list[tuple[tuple[str, ...], tuple[str, ...]]] = [(("",), ("",))] * len(titles)
        self._strips: tuple[int, list[Strip]] | None = None  # (width, the lines drawn at that width)

    @property
    def figures(self) -> list[tuple[str, str]]:
        """Every box's (figure, caption) in its longest wording."""
        return [(figure[0], caption[0]) for figure, caption in self._wordings]

    def show(self, figures: list[tuple[Words, Words]]) -> None:
        """Set every box's (figure, caption), in the order of the titles; each a text or its wordings,
        longest first, of which a narrow box shows the first that fits. Unchanged figures draw nothing."""
        worded = [(wordings(figure), wordings(caption)) for figure, caption in figures]
        if worded == self._wordings:
            return
        self._wordings = worded
        self._strips = None
        self.refresh()

    def shown(self) -> list[tuple[str, str, str]]:
        """What each box shows at the widget's width: (title, figure, caption), as chosen to fit."""
        tiles = self._tiles()
        _, chosen = fit_tiles(self.size.width, self.weights, tiles)
        return [pick(tile, level) for tile, level in zip(tiles, chosen)]

    def _tiles(self) -> list[tuple[tuple[str, ...], ...]]:
        return [(title, *worded) for title, worded in zip(self.titles, self._wordings)]

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
        tiles = self._tiles()
        boxes, chosen = fit_tiles(width, self.weights, tiles)
        for tile, level, box in zip(tiles, chosen, boxes):
            title, figure, caption = pick(tile, level)
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
