"""`quizapp export json` and `quizapp import`: progress to and from a versioned JSON file."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.commands.common import display_path, fail, open_store
from quizapp.study.store import StoreError
from quizapp.words import plural


def write_progress_json(path: Path) -> int:
    from quizapp.study.transfer import write_export

    if path.is_dir():
        return fail(f"{display_path(path)} is a folder; name the file to write, e.g. progress.json")
    store = open_store()
    if store is None:
        return 1
    with store:
        try:
            document = write_export(store, path)
        except OSError as exc:
            return fail(f"cannot write {display_path(path)}: {exc.strerror or exc}")
    click.echo(f"Wrote {display_path(path)}: {plural(len(document['answers']), 'answer')}, {plural(len(document['cards']), 'card')}, "
               f"{plural(len(document['grades']), 'grade')}, {plural(len(document['interviews']), 'interview')}"
               + (f", {plural(len(marks), 'flagged or suspended question')}"
                  if (marks := [m for m in document['question_marks'] if m['flagged'] or m['suspended']]) else "")
               + f"; your settings ({', '.join(setting_words(k, v) for k, v in document['settings'].items())}).")
    click.echo("On the other machine: quizapp import " + display_path(path))
    return 0


def merge_progress_json(path: Path) -> int:
    from quizapp.study.transfer import TransferError, import_progress, read_export

    try:
        document = read_export(path)
    except TransferError as exc:
        return fail(f"{exc}\n  Nothing was imported.")
    store = open_store()
    if store is None:
        return 1
    with store:
        try:
            summary = import_progress(store, document)
        except TransferError as exc:
            return fail(f"{display_path(path)}: {exc}\n  Nothing was imported.")
        except (StoreError, ValueError, OverflowError, RecursionError) as exc:
            # read_export checked every record; this is the last guard, never a traceback half-way
            return fail(f"the import of {display_path(path)} failed and was undone ({exc}); nothing was changed")
    if not summary.changed:
        click.echo(f"Nothing new in {display_path(path)}: everything in it is already here.")
        echo_kept_settings(summary)
        return 0
    click.echo(f"Imported from {display_path(path)}: {plural(summary.answers, 'answer')} (on {plural(summary.cards, 'question')}, "
               f"cards rescheduled from their whole history), {plural(summary.grades, 'grade')}, "
               f"{plural(summary.interviews, 'interview')}"
               + (f", {plural(summary.exercise_events, 'exercise event')} (hints, solutions read)"
                  if summary.exercise_events else "")
               + (f", {plural(summary.question_marks, 'flag or suspension', 'flags or suspensions')}"
                  if summary.question_marks else "") + ".")
    if summary.parameters:
        click.echo("Your fitted FSRS parameters came along and now schedule your reviews here.")
    for name, value in summary.settings:
        click.echo(f"Your setting came along: {setting_words(name, value)}.")
    echo_kept_settings(summary)
    return 0


def echo_kept_settings(summary) -> None:
    """A setting of this machine that the file's did not replace, said, so a difference is not silent."""
    for name, kept, theirs in summary.settings_kept:
        click.echo(f"Kept this machine's {setting_words(name, kept)} (the file has {theirs}; "
                   f"`quizapp config {name.replace('_', '-')} N` changes it).")


def setting_words(name: str, value) -> str:
    """"new-per-day = 10", as `quizapp config` names a setting."""
    return f"{name.replace('_', '-')} = {value}"
