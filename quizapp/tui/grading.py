"""The TUI's side of grading: turn a grader's events into messages, from one of two graders.

The warm grader (the app's own): `quizapp.grading.runner` in a thread of this process, with the
shared zygote forking each grade's child; torch lives in the zygote, never in the TUI. A command
(tests, custom set-ups): `quizapp grade --events` in a child process, which prints one JSON object
per line: a `start` event, a `check` event as each check finishes, and a final `report`. Anything
else on stdout is ignored. Either way the solution runs in a process group of its own, so
cancelling kills it and whatever it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from textual.message import Message

LINE_LIMIT = 16 * 1024 * 1024  # a check's curves can make one long line
STDERR_TAIL = 2000  # characters of the child's stderr shown when it dies without a report
GRACE_S = 2.0  # how long each signal gets on cancel before the next, harder one


def grade_command(prefix: list[str], path: Path, exercise_id: str) -> list[str]:
    return [*prefix, str(path), "--events", "--exercise", exercise_id]


@dataclass(frozen=True)
class CheckLine:
    """One finished check as the grader reported it."""

    id: str
    title: str
    status: str
    message: str = ""
    data: dict = field(default_factory=dict)

    @property
    def curves(self) -> dict | None:
        curves = self.data.get("curves") if isinstance(self.data, dict) else None
        return curves if isinstance(curves, dict) and isinstance(curves.get("series"), dict) else None


@dataclass
class GradeStarted(Message):
    device: str
    torch: str
    checks: list[tuple[str, str]]  # (id, title) in the order they will run


@dataclass
class CheckFinished(Message):
    check: CheckLine


@dataclass
class GradeFinished(Message):
    report: dict


@dataclass
class GradeFailed(Message):
    """The grader could not be started, or ended without a report."""

    reason: str


@dataclass
class GradeNotSaved(Message):
    """The grade was shown but could not be written to the progress store."""

    reason: str


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


def event_message(event: dict) -> Message | None:
    kind = event["event"]
    if kind == "start":
        checks = [(str(c.get("id", "")), str(c.get("title", c.get("id", ""))))
                  for c in event.get("checks") or () if isinstance(c, dict)]
        return GradeStarted(str(event.get("device") or "?"), str(event.get("torch") or "?"), checks)
    if kind == "check":
        data = event.get("data")
        return CheckFinished(CheckLine(
            id=str(event.get("id", "")), title=str(event.get("title") or event.get("id", "")),
            status=str(event.get("status", "error")), message=str(event.get("message") or ""),
            data=data if isinstance(data, dict) else {},
        ))
    if kind == "report" and isinstance(event.get("report"), dict):
        return GradeFinished(event["report"])
    return None


async def run_warm_grader(path: Path, exercise, post: Callable[[Message], object], store, *,
                          device: str = "auto") -> None:
    """Grade with the shared warm grader and post a message per event; records the grade in the store.

    Cancelling (a new grade, the cancel key, leaving the app) stops the solution's process group
    before this returns.
    """
    from quizapp.grading.record import record_grade
    from quizapp.grading import warm
    from quizapp.grading.runner import grade

    cancel = threading.Event()

    def forward(event: dict) -> None:
        message = event_message(event)
        if message is not None:
            post(message)

    def work():
        report = grade(path, exercise.folder, exercise_id=exercise.id, device=device, on_event=forward,
                       cancel=cancel, warm=warm.shared())
        if cancel.is_set():
            return report, None
        return report, record_grade(report, path, store)  # before the report is posted: the screen reads it back

    running = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        report, not_saved = await asyncio.shield(running)
    except asyncio.CancelledError:
        cancel.set()
        with contextlib.suppress(Exception):
            await running  # the runner kills the group within a poll
        raise
    if report.status == "usage":
        post(GradeFailed(report.message or "The grader could not run."))
        return
    post(GradeFinished(report.to_json()))
    if not_saved is not None:
        post(GradeNotSaved(not_saved))


def start_warm_grader() -> None:
    """Start the zygote now, so that the first grade finds torch imported."""
    from quizapp.grading import warm

    warm.shared().start()


async def run_grader(command: list[str], post: Callable[[Message], object], *, cwd: Path | None = None) -> None:
    """Run the grader and post a message per event; never raises for a misbehaving child."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, cwd=cwd, limit=LINE_LIMIT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # events must arrive as checks finish
        )
    except OSError as exc:
        post(GradeFailed(f"Could not start the grader ({command[0]}): {exc.strerror or exc}"))
        return
    stderr = asyncio.create_task(_tail(proc.stderr))
    reported = False
    try:
        while line := await _readline(proc.stdout):
            event = parse_event(line)
            message = event_message(event) if event else None
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
        post(GradeFailed(reason + (f"\n{tail}" if tail else "")))


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
