"""The keys of the screen underneath, and the global ones, in one list."""

from __future__ import annotations

from collections.abc import Callable, Iterable

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
            table = DataTable(cursor_type="row", zebra_stripes=True, id="keys")
            table.add_columns("key", "does", "")
            for row in self.rows:
                table.add_row(*row)
            yield table
            yield Static("Every action is also in the command palette (ctrl+p); ctrl+q quits from anywhere.",
                         classes="dim")
        yield Footer(compact=True)
