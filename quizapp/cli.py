"""The command line. Bare `quizapp` opens the TUI; every verb imports what it needs when it runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from quizapp import __version__


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quizapp")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Learn, practise and prove ML training techniques: questions with spaced repetition,
    and coding exercises graded by what your training loop actually does.

    Run without a command to open the app.
    """
    if ctx.invoked_subcommand is None:
        from quizapp.tui_launch import launch

        ctx.exit(launch())


@cli.group()
def bank() -> None:
    """The question bank."""


@bank.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def bank_check(paths: tuple[Path, ...]) -> None:
    """Validate question files (default: the whole bank and your own packs).

    Prints every problem as `file:line: reason` and exits 1 if there is any.
    """
    from quizapp.commands.bank_check import run

    sys.exit(run(paths))


@cli.command("list")
def list_() -> None:
    """List question topics and exercises with your status."""
    from quizapp.commands.listing import run

    sys.exit(run())


@cli.command()
def stats() -> None:
    """Print your self-study progress."""
    from quizapp.commands.stats import run

    sys.exit(run())


def main() -> None:
    cli(prog_name="quizapp")
