"""The grade panel: one grade flow for every screen that grades a file (an exercise, an interview's
exercise).

It owns the grade's worker (a new grade replaces the one running, which stops its process group),
the token that drops the messages of a grade a newer one replaced, the grader's messages, the
results table (`GradeResults`), cancelling, a grade that could not be saved (a notice), and, where
asked, grading again after a save of the file (as `quizapp watch` does). Its screen hears three
messages: `Grading` when a grade begins (from a key or a save), then exactly one of `Graded` (a
report came; the results show it) or `Failed` (none came: the grader failed, or the grade was
cancelled).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.containers import VerticalGroup
from textual.message import Message
from textual.worker import Worker, WorkerState

from quizapp.catalog import Exercise
from quizapp.grading.result import GradeReport
from quizapp.grading.saves import file_state
from quizapp.tui.context import StudyContext
from quizapp.tui.grading import CheckFinished, GradeFailed, GradeFinished, GradeNotSaved, GradeStarted
from quizapp.tui.savewatch import FileSaved, SaveWatcher
from quizapp.tui.widgets.results import GradeResults

CANCELLED = "grading was cancelled"


class GradePanel(VerticalGroup):
    DEFAULT_CSS = """
    GradePanel { height: auto; }
    """

    class Grading(Message):
        """A grade began: from a key, or from a save of the file."""

    @dataclass
    class Graded(Message):
        """A grade ended with a report, shown in the results already (and recorded by the grader)."""

        report: GradeReport

    @dataclass
    class Failed(Message):
        """A grade ended without a report: `reason` says why (the grader failed, or it was cancelled)."""

        reason: str

    def __init__(self, context: StudyContext, exercise: Exercise, *, idle: str | None = None,
                 regrade_on_save: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.context = context
        self.exercise = exercise
        self.idle = idle  # the status line before the first grade; None: the results' own
        self.grading = False
        self.token: object | None = None  # the running grade's; messages of older ones are dropped
        self.worker: Worker | None = None
        self.report: GradeReport | None = None  # the running grade's, once it came
        self.failure: str | None = None  # why the running grade has no report, once the grader said
        self.saves = SaveWatcher(self) if regrade_on_save else None
        self.path: Path | None = None  # the file graded, or watched for saves
        self.label = ""  # the file as the screen shows it
        self.graded_state: str | None = None  # the file as last graded here: a save that changes it regrades

    def compose(self):
        yield GradeResults(id="grade-results", idle=self.idle)

    @property
    def results(self) -> GradeResults:
        return self.query_one(GradeResults)

    # -- grading --------------------------------------------------------------------------------

    def grade(self, path: Path, label: str) -> None:
        """Grade `path` (shown as `label`), replacing a grade that runs."""
        self.path, self.label = path, label
        self.grading = True
        self.graded_state = file_state(path)
        self.report = self.failure = None
        self.results.begin(label)
        # Each message carries this grade's token: read on arrival, a newer grade may have started meanwhile.
        self.token = object()
        self.worker = self._grade(path, self.token)
        self.post_message(self.Grading())

    # exclusive: starting a grade cancels the one running, which stops its process group
    @work(exclusive=True, group="grade", exit_on_error=False)
    async def _grade(self, path: Path, token: object) -> None:
        await self.context.grader.grade(path, self.exercise, self.post_message, token=token)

    def cancel(self) -> None:
        self.workers.cancel_group(self, "grade")

    def _ours(self, message) -> bool:
        message.stop()  # the grader's messages end here; the screen hears Graded or Failed
        return message.token is self.token

    @on(GradeStarted)
    def _started(self, message: GradeStarted) -> None:
        if self._ours(message):
            self.results.started(message.device, message.torch, message.checks)

    @on(CheckFinished)
    def _check(self, message: CheckFinished) -> None:
        if self._ours(message):
            self.results.check_done(message.check)

    @on(GradeFinished)
    def _finished(self, message: GradeFinished) -> None:
        if self._ours(message):
            self.report = message.report
            self.results.finished(message.report)

    @on(GradeFailed)
    def _failed(self, message: GradeFailed) -> None:
        if self._ours(message):
            self.failure = message.reason
            self.results.failed(message.reason)

    @on(GradeNotSaved)
    def _not_saved(self, message: GradeNotSaved) -> None:
        message.stop()
        self.notify(f"The grade was not saved: {message.reason}", severity="error")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.worker or not event.worker.is_finished:
            return  # an older grade that a newer one replaced: the newer one owns the panel
        self.grading = False
        if event.state == WorkerState.CANCELLED:
            self.results.cancelled()
            self.post_message(self.Failed(CANCELLED))
        elif event.state == WorkerState.ERROR:
            self.results.failed(f"Grading failed inside quizapp: {event.worker.error}")
            self.post_message(self.Failed(f"grading failed inside quizapp: {event.worker.error}"))
        elif self.report is not None:
            self.post_message(self.Graded(self.report))
        else:
            self.post_message(self.Failed(self.failure or "the grader gave no report"))

    # -- grading again after a save -------------------------------------------------------------

    def watch(self, path: Path, label: str) -> None:
        """Watch `path` for saves (with regrade_on_save): each one that changes it grades it again,
        once it has been graded here."""
        if self.saves is not None:
            self.path, self.label = path, label
            self.saves.watch(path)

    def ungraded_save(self) -> None:
        """The file as it is now is not graded on its own (the starter put back): the next save is."""
        if self.graded_state is not None and self.path is not None:
            self.graded_state = file_state(self.path)

    @on(FileSaved)
    def _saved(self, message: FileSaved) -> None:
        message.stop()
        if message.path != self.path or self.graded_state is None:
            return
        state = file_state(message.path)
        if state is None or state == self.graded_state:
            return
        self.grade(message.path, self.label)

    def on_unmount(self) -> None:
        if self.saves is not None:
            self.saves.stop()
