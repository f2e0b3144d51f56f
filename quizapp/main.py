"""The `quizapp` command. Bare, it opens the app straight away; with arguments, the command line parses them."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) <= 1:
        # The front door needs no argument parser: skipping click's import saves about 20 ms of every start.
        from quizapp.tui_launch import launch

        sys.exit(launch())
    from quizapp.cli import main as command_line

    command_line()
