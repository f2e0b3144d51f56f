"""Shared by the TUI tests: the test data, the fixed clock, and small Pilot helpers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from textual import events
from textual.worker import WorkerCancelled

from quizapp.bank import Bank, load_bank, pack_files
from quizapp.grading.result import CheckResult, GradeReport
from quizapp.study.store import Store

DATA = Path(__file__).parent / "data"
FAKE_GRADER = Path(__file__).parent / "fake_grader.py"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
SIZE = (100, 32)
SMALL = (80, 24)
STARTER = (DATA / "exercises" / "scaled_loop" / "starter.py").read_text()
SOLVED = STARTER + "\n# solved\n"


async def settle(pilot) -> None:
    """Let workers finish and the screen catch up.

    A finished worker leaves a chain of messages behind (each check, the report, the worker's
    state change, then layout and plots); on a loaded machine one pause does not drain it.
    A cancelled worker counts as finished: the cancel tests make them, and wait() raises for them
    when the cancel lands before this call. A worker that failed still raises.
    """
    for worker in list(pilot.app.workers):
        try:
            await worker.wait()
        except WorkerCancelled:
            pass
    for _ in range(5):
        await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


KEY_CHARACTERS = {"enter": "\r", "escape": "\x1b"}


async def type_ahead(pilot, *keys: str) -> None:
    """Queue every key before any is handled, as a fast typist or a paste delivers them (Pilot's
    press waits for each key to be handled before it sends the next), then let them be handled."""
    for key in keys:
        pilot.app.post_message(events.Key(key, KEY_CHARACTERS.get(key, key if len(key) == 1 else None)))
    await pilot.pause()
    await pilot.pause()


def pack_bank() -> Bank:
    """The test pack: two small topics, every question type."""
    return load_bank(pack_files([DATA / "questions"]))


def passed_ten_days_ago(store: Store, work_dir, *, failed_first: bool = False) -> None:
    """scaled_loop passed 10 days before NOW (from ./scaled_loop.py): due again by NOW. With
    `failed_first`, a grade 20 minutes before the pass failed a check that rests on sc-text."""
    path = work_dir / "scaled_loop.py"
    path.write_text(SOLVED)
    if failed_first:
        store.record_grade("scaled_loop", status="fail", checks_passed=2, checks_total=3, file_path=str(path),
                           file_hash="first-try", at=NOW - timedelta(days=10, minutes=20),
                           report={"status": "fail", "review": ["sc-text"]})
    store.record_grade("scaled_loop", status="pass", checks_passed=3, checks_total=3, file_path=str(path),
                       file_hash="solved", at=NOW - timedelta(days=10), report={"status": "pass", "review": []})


class ReviewGrader:
    """Stands in for the app's grader: one check fails, and the report names the questions it rests on."""

    def __init__(self, review: list[str]) -> None:
        self.review = review

    def warm_up(self) -> None:
        pass

    async def grade(self, path, exercise, post, *, token=None) -> None:
        from quizapp.tui.grading import CheckFinished, GradeFinished, GradeStarted  # not before the app needs it

        check = CheckResult("scaled", "Backward runs on the scaled loss", "fail", "expected 2, saw 1")
        post(GradeStarted("cpu", "9.9.9", [(check.id, check.title)], token))
        post(CheckFinished(check, token))
        post(GradeFinished(GradeReport(exercise.id, str(path), "fail", None, "cpu", "9.9.9", 0.5, [check],
                                       review=self.review), token))
