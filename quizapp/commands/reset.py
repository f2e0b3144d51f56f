"""`quizapp reset ID [PATH]`: put the starter file back. Grades, reviews and hints are kept."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.commands.common import display_path, fail
from quizapp.commands.exercises import exercise_or_exit


def reset_exercise(exercise_id: str, path: Path | None, yes: bool) -> int:
    exercise = exercise_or_exit(exercise_id)
    target = path or Path(f"{exercise_id}.py")
    if target.is_dir():
        target = target / f"{exercise_id}.py"
    shown = display_path(target)
    try:
        starter = exercise.starter.read_bytes()
    except OSError as exc:
        return fail(f"the starter file of {exercise_id} cannot be read: {exc.strerror or exc}")
    try:
        current = target.read_bytes() if target.exists() else None
    except OSError as exc:
        return fail(f"{shown} cannot be read: {exc.strerror or exc}")
    if current == starter:
        click.echo(f"{shown} is already the starter of {exercise_id}; nothing to do.")
        return 0
    if current is not None and not yes:
        question = f"Replace {shown} with the starter of {exercise_id}? Your code in it will be lost"
        try:
            if not click.confirm(question, default=False):
                click.echo(f"Kept {shown}.")
                return 1
        except click.Abort:  # no answer (end of input): keep the file
            click.echo(f"\nKept {shown} (no answer; pass --yes to replace it without asking).", err=True)
            return 1
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(starter)
    except OSError as exc:
        return fail(f"could not write {shown}: {exc.strerror or exc}")
    click.echo(f"{shown} is the starter of {exercise.title} again; your progress is kept.")
    return 0
