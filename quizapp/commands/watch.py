"""`quizapp watch FILE`: grade, then regrade on every save with the warm grader, until Ctrl+C."""

from __future__ import annotations

import json
import os
import queue
import select
import sys
import threading
from pathlib import Path

import click

from quizapp.catalog import load_catalog
from quizapp.commands.common import display_path, fail
from quizapp.grading.processes import STOP_SIGNALS, signals_set
from quizapp.grading.resolve import UsageError, resolve_exercise
from quizapp.grading.result import GradeReport
from quizapp.grading.saves import changes_since, file_state, watch_saves

KEY_POLL_S = 0.1


class Keys:
    """Single key presses from the terminal (none when stdin is not one)."""

    def __init__(self, enabled: bool):
        self.fd = sys.stdin.fileno() if enabled else None
        self.saved = None

    def __enter__(self) -> Keys:
        if self.fd is not None:
            import termios
            import tty

            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)  # keys arrive one by one; Ctrl+C still sends SIGINT
        return self

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float) -> str:
        if self.fd is None:
            threading.Event().wait(timeout)
            return ""
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            return os.read(self.fd, 32).decode(errors="replace") if ready else ""
        except InterruptedError:
            return ""


class Screen:
    """The human view: the current table, what changed, the keys."""

    def __init__(self, exercise, file: Path, keys: bool):
        self.exercise = exercise
        self.file = file
        self.keys = keys

    def grading(self) -> None:
        click.echo(f"Grading {display_path(self.file)} as '{self.exercise.id}'...", err=True)

    def show(self, report: GradeReport, before: GradeReport | None) -> None:
        from quizapp.commands.grade import review_titles
        from quizapp.grading.render import print_report

        if sys.stdout.isatty():
            click.clear()
        print_report(report, self.exercise, review=review_titles(report.review))
        change = changes_since(before, report)
        if change:
            click.secho(change, bold=True)
        self.footer()

    def footer(self) -> None:
        keys = "  ·  h: next hint  ·  r: grade again  ·  q: quit" if self.keys else ""
        click.secho(f"Watching {display_path(self.file)}: save it to grade again{keys}  ·  Ctrl+C: stop", dim=True)

    def missing(self) -> None:
        click.echo(f"{display_path(self.file)} is gone; waiting for it to be saved again.", err=True)

    def hint(self) -> None:
        from quizapp.commands.exercises import show_hint

        show_hint(self.exercise.id, None, next_key="h" if self.keys else None)


class JsonLines:
    """--json-lines: one schema-1 object per grade on stdout, nothing else there."""

    def grading(self) -> None:
        pass

    def show(self, report: GradeReport, before: GradeReport | None) -> None:
        click.echo(json.dumps(report.to_json()))
        sys.stdout.flush()

    def missing(self) -> None:
        click.echo("quizapp watch: the file is gone; waiting for it to be saved again", err=True)

    def hint(self) -> None:
        pass


def watch_file(file: Path, exercise: str | None, device: str, json_lines: bool, timeout: float) -> int:
    catalog = load_catalog()
    try:
        exercise_id = resolve_exercise(file, exercise, catalog)
    except UsageError as exc:
        return fail(str(exc), 2)
    from quizapp.grading.warm import WarmGrader

    keys_on = not json_lines and sys.stdin.isatty() and sys.stdout.isatty()
    view = JsonLines() if json_lines else Screen(catalog[exercise_id], file, keys_on)
    warm = WarmGrader()
    warm.start()  # torch loads in the zygote while the watch starts
    stop = threading.Event()
    try:
        with signals_set(stop, STOP_SIGNALS), Keys(keys_on) as keys:
            return Watch(file, catalog[exercise_id], device, timeout, view, warm, stop).loop(keys)
    finally:
        warm.close()
        if stop.is_set():
            click.echo("Stopped watching.", err=True)


class Watch:
    def __init__(self, file, exercise, device, timeout, view, warm, stop):
        self.file, self.exercise, self.device, self.timeout = file, exercise, device, timeout
        self.view, self.warm, self.stop = view, warm, stop
        self.saves: queue.Queue = queue.Queue()
        self.graded_state = None
        self.last: GradeReport | None = None

    def loop(self, keys: Keys) -> int:
        watcher = threading.Thread(target=watch_saves, args=(self.file.resolve(), self.saves.put, self.stop),
                                   daemon=True)
        watcher.start()
        wanted = True  # the first grade, before any save
        while not self.stop.is_set():
            if wanted:
                wanted = False
                code = self.grade()
                if code is not None:
                    return code
            key = keys.read(KEY_POLL_S)
            if key and key[-1] in "qQ":
                break
            if key and key[-1] in "hH":
                self.view.hint()
            if key and key[-1] in "rR":
                wanted = True
                self.graded_state = None
            wanted = self.saved() or wanted
        self.stop.set()
        watcher.join(timeout=5)
        return 0

    def saved(self) -> bool:
        """True when a save happened that has not been graded yet."""
        seen = False
        while True:
            try:
                item = self.saves.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, Exception):
                fail(f"stopped watching {display_path(self.file)}: {item}")
                self.stop.set()
                return False
            seen = True
        if not seen:
            return False
        state = file_state(self.file)
        if state is None:
            self.view.missing()
            return False
        return state != self.graded_state

    def grade(self) -> int | None:
        """Grade once and show it; an exit code when the watch cannot go on (a usage error)."""
        from quizapp.grading.attempt import grade_and_record

        if file_state(self.file) is None:
            self.view.missing()
            return None
        self.view.grading()
        attempt = grade_and_record(self.exercise, self.file, device=self.device, timeout=self.timeout,
                                   cancel=self.stop, warm=self.warm)
        if attempt.cancelled:
            return None  # Ctrl+C during the grade: it was stopped, and says nothing about the file
        if attempt.usage:
            return fail(attempt.report.message or "the grader could not run", 2)
        self.graded_state = attempt.digest  # the content graded: a save that changes it grades again
        report = attempt.named(self.file)
        self.view.show(report, self.last)
        self.last = report
        if attempt.not_saved is not None:
            fail(f"the result was not saved: {attempt.not_saved}")
        return None
