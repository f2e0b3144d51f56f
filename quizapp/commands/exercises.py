"""`quizapp start`, `quizapp hint`, `quizapp solution`: the learner's loop around an exercise."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from quizapp.catalog import load_catalog
from quizapp.commands.common import fail, open_store


def exercise_or_exit(exercise_id: str):
    catalog = load_catalog()
    if exercise_id not in catalog:
        raise click.UsageError(f"unknown exercise '{exercise_id}' (known: {', '.join(catalog)})")
    return catalog[exercise_id]


def start_exercise(exercise_id: str, path: Path | None, force: bool) -> int:
    exercise = exercise_or_exit(exercise_id)
    target = path or Path(f"{exercise_id}.py")
    if target.is_dir():
        target = target / f"{exercise_id}.py"
    if target.exists() and not force:
        again = _comes_back(exercise) if path is None else None
        if again is None:
            return fail(f"{target} already exists; not overwriting it (use --force to replace it)", 1)
        # A passed exercise is solved again from a fresh starter in a new file; the old one is kept.
        from quizapp.study.due import next_free_path

        target = next_free_path(target.parent, exercise_id)
        click.echo(f"{exercise_id} {again}: a fresh starter goes to {target} ({exercise_id}.py is kept).")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(exercise.starter.read_text(encoding="utf-8"), encoding="utf-8")
    click.echo(f"Wrote {target}: {exercise.title}")
    click.echo(f"Read the task:  quizapp hint {exercise_id} 0   (the statement)")
    if exercise.is_drill:  # a drill is a whole script: running it shows the symptom
        click.echo(f"See the bug:    python {target}   ({exercise.symptom})")
    click.echo(f"When ready:     quizapp grade {target}")
    return 0


def _comes_back(exercise) -> str | None:
    """"is due for review" / "comes back for review in 2d" for a passed exercise; None before its first pass."""
    from quizapp.study.due import exercise_state
    from quizapp.study.schedule import format_interval
    from quizapp.study.store import Store, StoreError, utcnow

    try:
        with Store.open() as store:
            state = exercise_state(store, exercise)
    except StoreError:
        return None
    if state.due is None:
        return None
    now = utcnow()
    return "is due for review" if state.due <= now else f"comes back for review in {format_interval(state.due - now)}"


def show_hint(exercise_id: str, number: int | None, next_key: str | None = None) -> int:
    """Show hint `number` (0: the statement), or the next one the learner has not seen.
    `next_key`: the key that shows the next hint where the learner is (watch's h), named instead of the command.

    Hints seen are kept in the progress store (`Store.hints_shown`), shared with the app: the next
    hint follows on from whatever was shown last, here or there.
    """
    exercise = exercise_or_exit(exercise_id)
    hints = exercise.hints
    if number is not None and not 0 <= number <= len(hints):
        raise click.UsageError(f"{exercise_id} has {_hint_range(len(hints))}")
    if number == 0:
        show_markdown(exercise.statement)
        return 0
    if not hints:
        click.echo(f"{exercise_id} has no hints beyond its statement: quizapp hint {exercise_id} 0")
        return 0
    if number is None:
        store = open_store()  # says why on stderr when it cannot be opened
        if store is None:
            return 1
        with store:
            seen = max(store.hints_shown(exercise_id), _legacy_hints_seen(exercise_id))
            number = min(seen + 1, len(hints))
            store.set_hints_shown(exercise_id, number)
            store.record_exercise_event(exercise_id, "hint")  # a pass after a hint is rated Hard
    else:
        _remember_hint(exercise_id, number)
    show_markdown(hints[number - 1], heading=f"Hint {number}/{len(hints)}:")
    if number < len(hints):
        click.echo(f"(next: press {next_key})" if next_key else f"(next: quizapp hint {exercise_id})", err=True)
    else:
        click.echo(f"(that was the last hint; the statement: quizapp hint {exercise_id} 0)", err=True)
    return 0


def _hint_range(count: int) -> str:
    return f"hints 0 (the statement) to {count}" if count else "only hint 0 (the statement)"


def show_markdown(text: str, heading: str = "") -> None:
    """Markdown rendered by rich on a terminal; the text as written when piped (for scripts).
    A heading goes before it: bold on its own line on a terminal, on the text's first line when piped."""
    if sys.stdout.isatty():
        from rich.console import Console

        from quizapp.commands.richtext import QuestionMarkdown  # long code lines wrap under a mark

        console = Console()
        if heading:
            console.print(heading, style="bold", markup=False, highlight=False)
        console.print(QuestionMarkdown(text))
    else:
        click.echo(f"{heading} {text}" if heading else text)


def _remember_hint(exercise_id: str, number: int) -> None:
    """Count hint `number` as seen; showing it does not depend on the store being usable."""
    from quizapp.study.store import Store, StoreError

    try:
        with Store.open() as store:
            store.set_hints_shown(exercise_id, number)
            store.record_exercise_event(exercise_id, "hint")  # a pass after a hint is rated Hard
    except StoreError as exc:
        click.echo(f"quizapp: not remembered that this hint was shown: {exc.reason}", err=True)


def _legacy_hints_seen(exercise_id: str) -> int:
    """Hints seen as counted by quizapp before the store kept them (a file per exercise)."""
    from quizapp import paths

    seen_file = paths.data_dir() / "hints" / exercise_id
    try:
        text = seen_file.read_text().strip()
    except OSError:
        return 0
    return int(text) if text.isdecimal() else 0


def show_solution(exercise_id: str, yes: bool) -> int:
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
    try:
        with Store.open() as store:
            # Read while the exercise is new or due, a pass is rated Again (see study/exercise_schedule.py).
            store.record_exercise_event(exercise_id, "solution")
    except StoreError as exc:
        click.echo(f"quizapp: not remembered that the solution was shown: {exc.reason}", err=True)
    return 0
