"""The TUI's side of grading: run a grade and turn its events into messages (see `tui/graders.py`
for the app's one grader, which calls these).

`run_warm_grader`: the one grade use case (`grading.attempt`) in a thread of this process, with the
shared zygote forking each grade's child; torch lives in the zygote, never in the TUI. The grade is
recorded in the app's store before its report is posted.

`run_grader`: a command, `quizapp grade --events` (or a test's fake), in a child process, which
prints one JSON object per line: a `start` event, a `check` event as each check finishes, and a
final `report`; anything else on stdout is ignored. That command records the grade itself.

Either way the solution runs in a process group of its own, so cancelling kills it and whatever it
started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from quizapp.grading.events import Checked, GradeEvent, Reported, Started, read_event
from quizapp.grading.result import CheckResult, GradeReport

LINE_LIMIT = 16 * 1024 * 1024  # a check's curves can make one long line
STDERR_TAIL = 2000  # characters of the child's stderr shown when it dies without a report
GRACE_S = 2.0  # how long each signal gets on cancel before the next, harder one


def grade_command(prefix: list[str], path: Path, exercise_id: str) -> list[str]:
    return [*prefix, str(path), "--events", "--exercise", exercise_id]


# Each message carries the token of the grade it belongs to (the screen's, given when it started the
# grade): a screen drops the messages of a grade that a newer one replaced.

@dataclass
class GradeStarted(Message):
    device: str
    torch: str
    checks: list[tuple[str, str]]  # (id, title) in the order they will run
    token: object = None


@dataclass
class CheckFinished(Message):
    check: CheckResult
    token: object = None


@dataclass
class GradeFinished(Message):
    report: GradeReport
    token: object = None


@dataclass
class GradeFailed(Message):
    """The grader could not be started, or ended without a report."""

    reason: str
    token: object = None


@dataclass
class GradeNotSaved(Message):
    """The grade was shown but could not be written to the progress store."""

    reason: str
    token: object = None


def parse_event(line: bytes | str) -> dict | None:
    """The event on one line of the grader's stdout, or None for anything that is not one."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("event"), str) else None


def event_message(event: GradeEvent | dict, token: object = None) -> Message | None:
    """The message for a grade's event: a typed one, or one read from a grader command's JSON line."""
    if isinstance(event, dict):
        event = read_event(event)
    if isinstance(event, Started):
        return GradeStarted(event.device, event.torch, list(event.checks), token)
    if isinstance(event, Checked):
        return CheckFinished(event.check, token)
    if isinstance(event, Reported):
        return GradeFinished(event.report, token)
    return None  # an error event: the report that follows says it


async def run_warm_grader(path: Path, exercise, post: Callable[[Message], object], store, *,
                          device: str = "auto", token: object = None) -> None:
    """Grade with the shared warm grader and post a message per event; records the grade in the store.

    Cancelling (a new grade, the cancel key, leaving the app) stops the solution's process group
    before this returns.
    """
    from quizapp.grading import warm
    from quizapp.grading.attempt import grade_and_record

    cancel = threading.Event()

    def forward(event: GradeEvent) -> None:
        message = event_message(event, token)
        if message is not None:
            post(message)

    def work():
        # Recorded before the report is posted: the screen reads the store back when the grade ends.
        return grade_and_record(exercise, path, device=device, warm=warm.shared(), cancel=cancel, store=store,
                                on_event=forward)

    running = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        attempt = await asyncio.shield(running)
    except asyncio.CancelledError:
        cancel.set()
        with contextlib.suppress(Exception):
            await running  # the runner kills the group within a poll
        raise
    if attempt.cancelled:
        return
    if attempt.usage:
        post(GradeFailed(attempt.report.message or "The grader could not run.", token))
        return
    post(GradeFinished(attempt.report, token))
    if attempt.not_saved is not None:
        post(GradeNotSaved(attempt.not_saved, token))


async def run_grader(command: list[str], post: Callable[[Message], object], *, cwd: Path | None = None,
                     token: object = None) -> None:
    """Run the grader and post a message per event; never raises for a misbehaving child."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, cwd=cwd, limit=LINE_LIMIT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # events must arrive as checks finish
        )
    except OSError as exc:
        post(GradeFailed(f"Could not start the grader ({command[0]}): {exc.strerror or exc}", token))
        return
    stderr = asyncio.create_task(_tail(proc.stderr))
    reported = False
    try:
        while line := await _readline(proc.stdout):
            event = parse_event(line)
            message = event_message(event, token) if event else None
            if message is not None:
                reported = reported or isinstance(message, GradeFinished)
                post(message)
        code = await proc.wait()
    except asyncio.CancelledError:
        await kill_group(proc)
        stderr.cancel()
        raise
    tail = (await stderr).strip()
    if not reported:
        reason = f"The grader ended without a report (exit code {code})."
        post(GradeFailed(reason + (f"\n{tail}" if tail else ""), token))


async def _readline(stream: asyncio.StreamReader) -> bytes:
    try:
        return await stream.readline()
    except ValueError:  # a line over LINE_LIMIT: skip what is buffered and go on
        return b"\n"


async def _tail(stream: asyncio.StreamReader) -> str:
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-STDERR_TAIL * 4:]
    return kept.decode("utf-8", errors="replace")[-STDERR_TAIL:]


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """Stop the child's process group: SIGINT, then SIGTERM, then SIGKILL, each after a grace period.

    SIGINT first because it is what ctrl+c sends: the grader then runs its own clean-up, which
    stops the solution it started in a session of its own (out of reach of this group).
    """
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), GRACE_S)
        except asyncio.TimeoutError:
            continue
        break
    # The leader is gone; anything it left in its group goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
