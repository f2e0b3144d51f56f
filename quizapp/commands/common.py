"""Small helpers shared by the CLI verbs."""

from __future__ import annotations

import os
from pathlib import Path

import click

from quizapp.words import plural


def display_path(path: Path) -> str:
    """A path as the learner would type it: relative to the current folder when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def fail(message: str, code: int = 1) -> int:
    click.echo(f"quizapp: {message}", err=True)
    return code


def open_store():
    """The progress store, or None after printing why it cannot be opened."""
    from quizapp.study.store import Store, StoreError

    try:
        return Store.open()
    except StoreError as exc:
        fail(str(exc))
        return None


def load_bank_reporting():
    """The bank from the shipped and user packs; bad files are named on stderr and left out."""
    from quizapp.bank.cache import load_bank_cached

    bank = load_bank_cached()
    if bank.errors:
        fail(f"{plural(len(bank.errors), 'problem')} in question files; those files were skipped:")
        for error in bank.errors:
            click.echo(f"  {display_path(error.path)}:{error.line}: {error.reason}", err=True)
        click.echo("  (run `quizapp bank check` for details)", err=True)
    return bank
