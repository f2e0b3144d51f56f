"""The keys of the screen underneath, and the global ones, in one list."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from quizapp.tui.screens import SCREENS_CSS


def key_rows(bindings: Iterable[ActiveBinding], key_display: Callable[[Binding], str]) -> list[tuple[str, str, str]]:
    """(keys, what, more) per action; keys bound to one action share a row, 1..9 reads as 1-9."""
    rows: dict[tuple[int, str], list] = {}
    for active in bindings:
        binding = active.binding
        # Textual's own widgets bring many hidden keys (cursor, paging, copy); list only what they show.
        ours = type(active.node).__module__.startswith("quizapp.")
        if binding.system or not binding.description or not (binding.show or ours):
            continue
        group = binding.action.split("(")[0] if binding.key.isdigit() and not binding.tooltip else binding.action
        row = rows.setdefault((id(active.node), group), [[], binding.description, binding.tooltip])
        row[0].append(binding.key if binding.key.isdigit() else key_display(binding))
    out = []
    for keys, what, more in rows.values():
        if len(keys) > 2 and all(k.isdigit() for k in keys):
            keys, what = [f"{keys[0]}-{keys[-1]}"], what.rstrip("0123456789 ")
        out.append((" ".join(keys), what, more))
    return out


class HelpScreen(ModalScreen[None]):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", tooltip="Back to where you were")]

    def __init__(self, bindings: Iterable[ActiveBinding], key_display: Callable[[Binding], str]) -> None:
        super().__init__()
        self.rows = key_rows(bindings, key_display)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static("Keys on this screen", classes="dialog-title")
            yield DataTable(cursor_type="row", zebra_stripes=True, id="keys")
            yield Static("Every action is also in the command palette (ctrl+p); ctrl+q quits from anywhere.",
                         classes="dim")
        yield Footer(compact=True)

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
