"""The footer every screen shows: Help first, and the command palette's key only where there is room."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer

# Shown first whatever the screen: at 80 columns a newcomer must see where every other key is listed.
FIRST_ACTIONS = ("help",)
# Below this width the palette's key (docked right) would cover the screen's own keys; the help
# screen names ctrl+p instead.
PALETTE_KEY_FROM = 100


class KeysFooter(Footer):
    """A compact footer that leads with Help and drops the palette's key on narrow terminals."""

    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)

    def compose(self) -> ComposeResult:
        # Footer yields one key per action in the order of the binding chain (focused widget, screen,
        # app), which puts the app's Help last, past the edge of an 80-column terminal. The keys are
        # put in our order here; a binding group (none in this app) would keep Footer's own order.
        keys = list(super().compose())
        first = [key for key in keys if getattr(key, "action", None) in FIRST_ACTIONS]
        yield from first + [key for key in keys if key not in first]

    def on_resize(self, event: events.Resize) -> None:
        wide = event.size.width >= PALETTE_KEY_FROM
        if wide != self.show_command_palette:
            self.show_command_palette = wide
            self.call_after_refresh(self.recompose)
