"""`quizapp grade`: grade a solution file, print the report, record the attempt."""

from __future__ import annotations

import json
import os
import sys
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path

import click

from quizapp.catalog import load_catalog
from quizapp.grading.attempt import Attempt, grade_and_record
from quizapp.grading.events import Checked, GradeEvent, Reported, Started
from quizapp.grading.processes import STOP_SIGNALS, signals_set
from quizapp.grading.resolve import UsageError, resolve_exercise
from quizapp.grading.result import GradeReport
from quizapp.study.store import Store, StoreError


def usage_report(file: Path, exercise: str | None, message: str) -> GradeReport:
    return GradeReport(exercise=exercise or "", file=str(file), status="error", message=message,
                       device=None, torch=None, duration_s=0.0)


def grade_file(file: Path, exercise: str | None, device: str, as_json: bool, events: bool, timeout: float) -> int:
    catalog = load_catalog()
    try:
        exercise_id = resolve_exercise(file, exercise, catalog)
    except UsageError as exc:
        return usage_exit(file, exercise, str(exc), as_json or events, events)

    def print_event(event: GradeEvent) -> None:
        click.echo(json.dumps(event.to_json()))

    if not (as_json or events):
        click.echo(f"Grading {file} as '{exercise_id}'...", err=True)
    cancel = threading.Event()
    # One opening of the store for the whole command: the grade is recorded in it, and a pass's next
    # exercise is read from it. Where it cannot be opened now, the recording tries and says why.
    store = open_quietly()
    try:
        # A closed terminal (SIGHUP) stops the grade like Ctrl+C: the solution's processes and the grade's
        # folder go with it. The handler is set explicitly, so a SIGHUP ignored by whoever started us
        # (nohup, some CI runners) cannot leave the grader running on.
        with signals_set(cancel, STOP_SIGNALS), progress_on_stderr(enabled=not (as_json or events),
                                                                   timeout=timeout) as progress:
            # Recorded before anything is printed: a reader that stops early (`| head`) never loses the grade.
            attempt = grade_and_record(catalog[exercise_id], file, device=device, timeout=timeout, cancel=cancel,
                                       store=store, on_event=print_event if events else progress)
        return show_attempt(attempt, file, catalog, as_json=as_json, events=events, store=store)
    finally:
        if store is not None:
            store.close()


def open_quietly() -> Store | None:
    try:
        return Store.open()
    except (StoreError, OSError):
        return None


def show_attempt(attempt: Attempt, file: Path, catalog, *, as_json: bool, events: bool, store: Store | None) -> int:
    """Print the attempt's report (the file as the learner named it); its exit code."""
    report = attempt.named(file)
    if attempt.cancelled:
        with output_may_be_gone():
            if as_json:
                click.echo(json.dumps(report.to_json()))
            click.echo(f"quizapp grade: {report.message}", err=True)
        return 1
    if attempt.usage:
        return usage_exit(file, report.exercise, report.message, as_json or events, events)
    with output_may_be_gone():
        if events:
            click.echo(json.dumps(Reported(report).to_json()))
        elif as_json:
            click.echo(json.dumps(report.to_json()))
        else:
            from quizapp.grading.render import print_report

            print_report(report, catalog[report.exercise], console=quiet_on_broken_pipe(),
                         review=review_titles(report.review))
        if attempt.not_saved is not None:
            click.echo(f"quizapp: the result was not saved: {attempt.not_saved}", err=True)
        elif report.status == "pass" and not (as_json or events):
            say_next_exercise(catalog, store)
    return report.exit_code


def quiet_on_broken_pipe():
    """A rich console that stops printing when its reader goes, instead of exiting with status 1 as
    rich does: the grade's exit code stays the verdict."""
    from rich.console import Console

    class QuietConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            to_nowhere()

    return QuietConsole()


def to_nowhere() -> None:
    """Point stdout at /dev/null: Python flushes it again at exit, and that flush must not fail too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


@contextmanager
def output_may_be_gone():
    """A reader that closed the pipe (`| head`) or a terminal that went away ends the output quietly:
    the grade is already recorded, and nobody is left to read a traceback."""
    try:
        yield
        sys.stdout.flush()
    except OSError:  # BrokenPipeError, or EIO from a closed terminal
        to_nowhere()


def say_next_exercise(catalog, store: Store | None) -> None:
    """After a pass: the next exercise on the path (weakest topic first, then the easiest, not yet passed),
    read from `store` (opened here when the command had none)."""
    from quizapp.bank.cache import load_outline_cached
    from quizapp.study.path import next_exercise_in

    try:
        with (Store.open() if store is None else nullcontext(store)) as reading:
            upcoming = next_exercise_in(reading, load_outline_cached()[0], catalog)
    except StoreError:
        return  # the grade said what matters; the path is a suggestion
    if upcoming is None:
        click.echo("Every exercise and drill is passed. `quizapp due` says when each comes back for review.")
    else:
        click.echo(f"Next on your path: {upcoming.title} ({upcoming.id}, difficulty {upcoming.difficulty}): "
                   f"quizapp start {upcoming.id}")


def review_titles(ids: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The failed checks' questions named by their prompts (the bank is read only when there are some)."""
    if not ids:
        return [], []
    from quizapp.bank.cache import load_bank_cached
    from quizapp.bank.titles import titles_of

    return titles_of(ids, load_bank_cached().questions)


@contextmanager
def progress_on_stderr(*, enabled: bool, timeout: float):
    """A one-line live status on a terminal's stderr while the checks run ("check 3 of 14: ..."), so a
    slow solution is not mistaken for a hung grader; yields the event callback (None when off)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    planned: list[str] = []
    done = 0
    with Console(stderr=True).status(f"Starting the solution (the limit is {timeout:g} s)...") as status:
        def on_event(event: GradeEvent) -> None:
            nonlocal done
            if isinstance(event, Started):
                planned[:] = [title for _, title in event.checks]
            elif isinstance(event, Checked):
                done += 1
            if planned and done < len(planned):
                status.update(f"Check {done + 1} of {len(planned)}: {planned[done]}")

        yield on_event


def usage_exit(file: Path, exercise: str | None, message: str, as_json: bool, events: bool) -> int:
    if events:
        click.echo(json.dumps({"event": "report", "report": usage_report(file, exercise, message).to_json()}))
    elif as_json:
        click.echo(json.dumps(usage_report(file, exercise, message).to_json()))
    click.echo(f"quizapp grade: {message}", err=True)
    return 2
