"""`quizapp start`, `quizapp hint`, `quizapp solution`: the learner's loop around an exercise."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.catalog import load_catalog
from quizapp.commands.common import fail


def exercise_or_exit(exercise_id: str):
    catalog = load_catalog()
    if exercise_id not in catalog:
        raise click.UsageError(f"unknown exercise '{exercise_id}' (known: {', '.join(catalog)})")
    return catalog[exercise_id]


def start(exercise_id: str, path: Path | None, force: bool) -> int:
    exercise = exercise_or_exit(exercise_id)
    target = path or Path(f"{exercise_id}.py")
    if target.is_dir():
        target = target / f"{exercise_id}.py"
    if target.exists() and not force:
        return fail(f"{target} already exists; not overwriting it (use --force to replace it)", 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(exercise.starter.read_text(encoding="utf-8"), encoding="utf-8")
    click.echo(f"Wrote {target}: {exercise.title}")
    click.echo(f"Read the task:  quizapp hint {exercise_id} 0   (the statement)")
    click.echo(f"When ready:     quizapp grade {target}")
    return 0


def hint(exercise_id: str, number: int | None) -> int:
    exercise = exercise_or_exit(exercise_id)
    if number == 0:
        click.echo(exercise.statement)
        return 0
    hints = exercise.hints
    if number is None:
        # The next hint: one more than the learner has seen, remembered in the data dir.
        seen_file = _hint_file(exercise_id)
        text = seen_file.read_text().strip() if seen_file.exists() else ""
        seen = int(text) if text.isdecimal() else 0
        number = min(seen + 1, len(hints))
        seen_file.parent.mkdir(parents=True, exist_ok=True)
        seen_file.write_text(str(number))
    if not 1 <= number <= len(hints):
        raise click.UsageError(f"{exercise_id} has hints 1 to {len(hints)}")
    click.echo(f"Hint {number}/{len(hints)}: {hints[number - 1]}")
    if number < len(hints):
        click.echo(f"(next: quizapp hint {exercise_id})", err=True)
    return 0


def _hint_file(exercise_id: str) -> Path:
    from quizapp import paths

    return paths.data_dir() / "hints" / exercise_id


def solution(exercise_id: str, yes: bool) -> int:
    from quizapp.study.store import Store, StoreError

    exercise = exercise_or_exit(exercise_id)
    passed = False
    try:
        with Store.open() as store:
            passed = any(g.status == "pass" for g in store.grades(exercise_id))
    except StoreError:
        pass
    if not passed and not yes:
        if not click.confirm(f"You have not passed {exercise_id} yet. Show the reference solution anyway?", default=False):
            return 1
    click.echo(exercise.reference.read_text(encoding="utf-8"))
    return 0
