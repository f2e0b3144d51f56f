"""The keys of the screen underneath, and the global ones, in one list."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.footer import KeysFooter

# The line above the keys when a screen says nothing of its own (a screen's START_HERE says more).
START_HERE = "Start here: the keys at the top are this screen's own; escape goes back."


def key_rows(bindings: Iterable[ActiveBinding], key_display: Callable[[Binding], str]) -> list[tuple[str, str, str]]:
    """(keys, what, more) per action: the screen's own keys first, then the app's, then moving around
    (Textual's cursor and focus keys). Keys bound to one action share a row (q and ctrl+q both quit);
    1..9 reads as 1-9."""
    rows: dict[tuple[bool, str], list] = {}
    for active in bindings:
        binding = active.binding
        # Textual's own widgets bring many hidden keys (cursor, paging, copy); list only what they show.
        ours = type(active.node).__module__.startswith("quizapp.")
        if binding.system or not binding.description or not (binding.show or ours):
            continue
        if binding.action == "command_palette":  # named in the line above the table
            continue
        # The screen's own actions carry a tooltip; cursor and focus keys (ours or Textual's) do not.
        place = 1 if isinstance(active.node, App) else 0 if ours and binding.tooltip else 2
        action = binding.action.removeprefix("app.")
        group = action.split("(")[0] if binding.key.isdigit() and not binding.tooltip else action
        row = rows.setdefault((place == 2, group), [place, [], binding.description, binding.tooltip])
        shown = binding.key if binding.key.isdigit() else key_display(binding)
        if shown not in row[1]:
            row[1].append(shown)
    out = []
    for _place, keys, what, more in sorted(rows.values(), key=lambda row: row[0]):
        if len(keys) > 2 and all(k.isdigit() for k in keys):
            keys, what = [f"{keys[0]}-{keys[-1]}"], what.rstrip("0123456789 ")
        out.append((" ".join(keys), what, more))
    return out


class HelpScreen(ModalScreen[None]):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", tooltip="Back to where you were")]

    def __init__(self, bindings: Iterable[ActiveBinding], key_display: Callable[[Binding], str],
                 start_here: str | None = None) -> None:
        super().__init__()
        self.rows = key_rows(bindings, key_display)
        self.start_here = start_here or START_HERE

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Keys on this screen", classes="dialog-title")
            yield Static(f"{self.start_here}\n[dim]Every action is also in the command palette (ctrl+p).[/]",
                         id="start-here")
            yield DataTable(cursor_type="row", zebra_stripes=True, id="keys")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.fill()

    def on_resize(self) -> None:
        self.fill()

    def fill(self) -> None:
        """Lay the rows out for the dialog's width: every description wraps whole instead of being cut
        mid-word (DataTable sizes a row's height when the row is added, so the rows are added anew)."""
        table = self.query_one("#keys", DataTable)
        width = table.size.width or min(90, self.app.size.width) - 4
        keys = max((len(row[0]) for row in self.rows), default=3)
        does = max((len(row[1]) for row in self.rows), default=4)
        more = max(12, width - keys - does - 3 * 2 - 1)
        table.clear(columns=True)
        table.add_column("key", width=keys)
        table.add_column("does", width=does)
        table.add_column("", width=more)
        for key, what, tooltip in self.rows:
            table.add_row(key, what, Text(tooltip or ""), height=None)
