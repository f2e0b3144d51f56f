"""Opening the TUI from the command line."""

from __future__ import annotations

import click


def launch() -> int:
    click.echo("The quizapp TUI is not built yet. Meanwhile: quizapp list, quizapp stats, quizapp bank check.")
    return 0
