"""One attempt at an exercise: grade a learner's file and keep the result. Every front end grades
through `grade_and_record`: `quizapp grade`, `quizapp watch`, the command-line interview and the app.

The rules it applies, once for all of them:

- The file's bytes are read once, before the grade: they are what the child runs and what the
  recorded digest is taken from, so a save while the checks run belongs to the next grade, never
  lends its digest to this one's result.
- A cancelled grade (its `cancel` event set: Ctrl+C, a closed terminal, the app's cancel key)
  says nothing about the solution: its report is an error that says so, and it is not recorded.
- A grade the grader could not run at all (status "usage") is not recorded; the front end says why.
- Every other grade is recorded (grading.record) under the file's absolute, resolved path. A
  write the store refuses is told in the attempt, never raised: the result is shown all the same.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizapp.grading.record import record_grade
from quizapp.grading.result import GradeReport
from quizapp.grading.runner import DEFAULT_TIMEOUT_S, grade

if TYPE_CHECKING:
    from quizapp.catalog import Exercise
    from quizapp.grading.events import GradeEvent
    from quizapp.grading.warm import WarmGrader
    from quizapp.study.store import Store

CANCELLED = "cancelled; the solution's processes were stopped"


@dataclass(frozen=True)
class Attempt:
    """A finished grade and what became of it."""

    report: GradeReport  # its `file` is `path`; a front end shows the file as it names it (`named`)
    path: Path  # absolute and resolved: what the store keeps
    digest: str | None  # sha256 of the bytes graded, read before the grade; None when they could not be read
    cancelled: bool = False  # stopped before its end: not recorded
    not_saved: str | None = None  # why a grade that counts could not be recorded; None: recorded (or not to be)

    @property
    def usage(self) -> bool:
        """The grader could not run the file at all (exit code 2 on the command line)."""
        return self.report.status == "usage"

    def named(self, file: Path | str) -> GradeReport:
        """The report with the file as the front end names it (as typed, or as shown)."""
        return replace(self.report, file=str(file))


def grade_and_record(exercise: Exercise, file: Path, *, device: str = "auto", timeout: float = DEFAULT_TIMEOUT_S,
                     warm: WarmGrader | None = None, cancel: threading.Event | None = None,
                     store: Store | None = None, on_event: Callable[[GradeEvent], None] | None = None) -> Attempt:
    """Grade `file` against `exercise` and record the attempt (in `store`, else in the process's own
    store, opened for the write and closed); never raises for a bad solution or a refused write.

    `warm`: fork the child from this warm grader when it can (runner.grade). `cancel`: set it to stop
    the grade; the solution's processes are stopped within a poll. `on_event` hears each event.
    """
    path = file.resolve()
    try:
        content: bytes | None = path.read_bytes()
    except OSError:
        content = None  # the runner reads it again, and its report says why it could not
    digest = hashlib.sha256(content).hexdigest() if content is not None else None
    report = grade(path, exercise, content=content, device=device, timeout=timeout, on_event=on_event,
                   cancel=cancel, warm=warm)
    if cancel is not None and cancel.is_set():
        return Attempt(replace(report, status="error", message=CANCELLED), path, digest, cancelled=True)
    if report.status == "usage":
        return Attempt(report, path, digest)
    return Attempt(report, path, digest, not_saved=record_grade(report, path, store, digest=digest))
