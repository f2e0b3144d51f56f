"""`quizapp export anki FILE.apkg`: the question bank as an Anki deck."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.commands.common import display_path, fail, load_bank_reporting


def write_anki_deck(path: Path) -> int:
    if path.suffix.lower() != ".apkg":
        return fail(f"{display_path(path)}: an Anki package ends in .apkg (Anki imports nothing else), "
                    f"e.g. quizapp export anki quizapp.apkg")
    if path.is_dir():
        return fail(f"{display_path(path)} is a folder; name the file to write, e.g. quizapp.apkg")
    bank = load_bank_reporting()
    if not bank.questions:
        return fail("the question bank is empty: nothing to export")
    from quizapp.export.anki import DECK_ROOT, write_apkg

    try:
        summary = write_apkg(bank, path)
    except OSError as exc:
        return fail(f"cannot write {display_path(path)}: {exc.strerror or exc}")
    click.echo(f"Wrote {display_path(path)}: {summary.notes} notes in {summary.decks} subdecks of \"{DECK_ROOT}\".")
    click.echo("Open it with Anki (File > Import). Importing a newer export updates these notes, never duplicates them.")
    return 0
