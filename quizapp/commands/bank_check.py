"""`quizapp bank check`: validate question packs."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.bank import load_bank, pack_files
from quizapp.bank.load import default_pack_files
from quizapp.commands.common import display_path
from quizapp.words import plural


def _real(path: Path) -> Path:
    """Where path leads; as given when it cannot be followed (a symlink loop: its own error says so)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python before 3.13 on a symlink loop
        return path.absolute()


def check_bank(locations: tuple[Path, ...]) -> int:
    if locations:
        files = pack_files(locations)
        chosen = {_real(p) for p in files}
        # Named packs are checked against the rest of the bank too, so an id clash shows now.
        context = [p for p in default_pack_files() if _real(p) not in chosen]
        if not files:
            click.echo("no question files (*.yaml) found in " + ", ".join(map(str, locations)), err=True)
            return 1
    else:
        files, context = default_pack_files(), []
    bank = load_bank(files, context=context)
    # Warnings among the errors, in file and line order: each is read where it points.
    order = {path: n for n, path in enumerate(files)}
    for problem in sorted(bank.errors + bank.warnings, key=lambda e: (order.get(e.path, len(order)), e.line)):
        click.echo(f"{display_path(problem.path)}:{problem.line}: {problem.reason}")
    bad_files = len({e.path for e in bank.errors})
    # A warning never changes the exit status: a bank that loads whole is valid.
    warned = f"; {plural(len(bank.warnings), 'warning')}" if bank.warnings else ""
    if bank.errors:
        click.echo(f"{plural(len(bank.errors), 'error')} in {bad_files} of {plural(len(files), 'file')}{warned}",
                   err=True)
        return 1
    click.echo(f"ok: {plural(len(files), 'file')}, {plural(len(bank.topics), 'topic')}, "
               f"{plural(len(bank.questions), 'question')}{warned}", err=True)
    return 0
