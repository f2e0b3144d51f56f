"""The TUI's screens: each composes widgets and talks to the App through messages and actions."""

from pathlib import Path

# Every screen but home names this stylesheet; Textual reads it when the first of them opens.
SCREENS_CSS = Path(__file__).parent.parent / "screens.tcss"
