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
    """The progress store, or None after printing why it cannot be opened.

    Damaged cards in it are named on stderr, once, here (see report_damaged_cards).
    """
    from quizapp.study.store import Store, StoreError

    try:
        store = Store.open()
    except StoreError as exc:
        fail(str(exc))
        return None
    report_damaged_cards(store)
    return store


def report_damaged_cards(store) -> None:
    """Name the stored cards that cannot be read: every reader takes them as rebuilt from the question's
    answers (as unseen when it has none), and the next review of the question saves a sound one."""
    from quizapp.study.stats import damaged_cards

    damaged = damaged_cards(store)
    if not damaged:
        return
    shown = "; ".join(f"{qid[:80]}: {why}" for qid, why in list(damaged.items())[:5])
    more = f"; and {len(damaged) - 5} more" if len(damaged) > 5 else ""
    fail(f"the saved schedule of {plural(len(damaged), 'question')} is damaged ({shown}{more}).\n"
         "  Your progress and exports take it as rebuilt from your answers, and your next review of it saves a\n"
         "  sound one; your answers are intact (`quizapp export json FILE` keeps them all).")


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
