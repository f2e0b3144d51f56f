"""Parent side: run a solution in a child process with limits, and turn its events into a report.

No torch here: the child imports it. The parent alone writes to the progress database.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizapp.grading.result import CHECK_STATUSES, CheckResult, GradeReport, overall_status
from quizapp.grading.warm import child_env

if TYPE_CHECKING:
    from quizapp.grading.warm import WarmGrader

OUTPUT_CAP = 64 * 1024
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_MB = 8192
POLL_S = 0.02


class OutputCollector(threading.Thread):
    """Drain the child's stdout+stderr, keeping the first OUTPUT_CAP bytes, so it can never block."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := self.stream.read(65536):
            self.total += len(chunk)
            room = OUTPUT_CAP - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.total > OUTPUT_CAP:
            text += f"\n[... output cut: {self.total - OUTPUT_CAP} more bytes not shown]"
        return text


class EventFile:
    """Read complete JSON lines as the child appends them."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.buffer = b""

    def new_events(self) -> list[dict]:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events


def become_subreaper() -> bool:
    """Linux: orphaned descendants re-parent to this process instead of init, so a solution's
    process that left the group (setsid, a double fork) can still be found and stopped."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        pr_set_child_subreaper = 36
        return ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def child_pids() -> set[int]:
    """This process's child processes, read from /proc (empty where there is none)."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").glob("[0-9]*/stat") if Path("/proc").is_dir() else ():
        try:
            ppid = int(entry.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            found.add(int(entry.parent.name))
    return found


def stop_escaped(keep: set[int]) -> None:
    """Kill and reap our children but `keep` (say, those we had before the grade); their own orphans come next."""
    for _ in range(100):
        escaped = child_pids() - keep
        if not escaped:
            return
        for pid in escaped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in escaped:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _kill_group(proc) -> None:
    if hasattr(proc, "kill_group"):  # a warm child: its keeper leads the group, and may be gone already
        proc.kill_group()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def child_args(exercise_dir: Path, solution: Path, device: str, results: Path, memory_mb: int) -> list[str]:
    """The arguments of `python -m quizapp.grading.child`, for a cold child and a warm one alike."""
    return ["--exercise-dir", str(exercise_dir), "--solution", str(solution), "--device", device,
            "--results", str(results), "--memory-mb", str(memory_mb)]


def grade(solution: Path, exercise_dir: Path, *, exercise_id: str, device: str = "auto",
          timeout: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB,
          on_event: Callable[[dict], None] | None = None,
          cancel: threading.Event | None = None, warm: "WarmGrader | None" = None) -> GradeReport:
    """Grade `solution` against the exercise in `exercise_dir`; never raises for a bad solution.

    With `warm`, the child is forked from the warm grader's zygote when it can give one (torch
    already imported); otherwise, or without it, a fresh interpreter is started (cold). Either way
    the child and its limits are the same.
    """
    started = time.monotonic()
    solution = solution.resolve()
    scratch = Path(tempfile.mkdtemp(prefix="quizapp-grade-"))
    results = scratch / "events.jsonl"
    workdir = scratch / "work"
    workdir.mkdir()
    env = child_env()
    args = child_args(exercise_dir, solution, device, results, memory_mb)
    state = _RunState(exercise_id, solution, on_event)
    proc = warm.spawn(args, workdir, env, device=device) if warm is not None else None
    reaping = False
    if proc is None:
        reaping = become_subreaper()
        ours_before = child_pids() if reaping else set()
        try:
            proc = subprocess.Popen([sys.executable, "-m", "quizapp.grading.child", *args], cwd=workdir, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            return state.report(started, f"could not start the grader process: {exc}", "")
    collector = OutputCollector(proc.stdout)
    collector.start()
    events = EventFile(results)
    reason = None
    try:
        while proc.poll() is None:
            state.feed(events.new_events())
            if time.monotonic() - started > timeout:
                reason = f"timed out after {timeout:g} s (the whole process group was killed); look for an endless loop or a long sleep"
                break
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
                break
            time.sleep(POLL_S)
    finally:
        _kill_group(proc)  # also stops anything the solution started in its group
        proc.wait()
        if reaping:
            stop_escaped(ours_before)  # and what left the group; it may hold the output pipe open
        collector.join(timeout=5)
    state.feed(events.new_events())
    shutil.rmtree(scratch, ignore_errors=True)
    if reason is None and not state.done:
        reason = _early_end(proc.returncode, state)
    return state.report(started, reason, collector.text())


def _early_end(returncode: int, state: "_RunState") -> str:
    during = f" during check '{state.current}'" if state.current else ""
    if returncode < 0:
        sig = signal.Signals(-returncode).name if -returncode in signal.Signals._value2member_map_ else str(-returncode)
        hint = " (out of memory?)" if sig == "SIGKILL" else ""
        return f"the solution's process was killed by {sig}{hint}{during}"
    return (f"the solution ended the process early (exit code {returncode}){during}, e.g. with os._exit(); "
            "a solution must return, not exit")


def _well_formed(event) -> bool:
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return False
    if event["event"] == "check":
        return (all(isinstance(event.get(k), str) for k in ("id", "title", "message"))
                and event.get("status") in CHECK_STATUSES and isinstance(event.get("data", {}), dict))
    if event["event"] == "start":
        return isinstance(event.get("checks"), list) and all(isinstance(c, dict) for c in event["checks"])
    return True


class _RunState:
    """Accumulates the child's events into checks, forwarding each event as it arrives."""

    def __init__(self, exercise_id: str, solution: Path, on_event):
        self.exercise_id = exercise_id
        self.solution = solution
        self.on_event = on_event
        self.checks: list[CheckResult] = []
        self.planned: list[dict] = []
        self.device = self.torch = None
        self.error: str | None = None
        self.usage_error: str | None = None
        self.done = False

    @property
    def current(self) -> str | None:
        return self.planned[len(self.checks)]["id"] if len(self.checks) < len(self.planned) else None

    def feed(self, events: list[dict]) -> None:
        for event in events:
            if not _well_formed(event):
                continue  # whatever else reached the file (say, a solution writing to it) is ignored
            kind = event.get("event")
            if kind == "start":
                self.device, self.torch = event.get("device"), event.get("torch")
                self.planned = list(event.get("checks", []))
            elif kind == "check":
                self.checks.append(CheckResult(event["id"], event["title"], event["status"],
                                               event.get("message", ""), event.get("data") or {}))
            elif kind == "error":
                self.error = event.get("message")
            elif kind == "usage_error":
                self.usage_error = event.get("message")
            elif kind == "done":
                self.done = True
                continue
            if self.on_event is not None and kind in ("start", "check", "error"):
                self.on_event(event)

    def report(self, started: float, cut_short: str | None, output: str) -> GradeReport:
        checks = list(self.checks)
        message = self.error
        if self.planned and len(checks) < len(self.planned) and cut_short is None:
            # Announced checks that never reported: never a pass, whatever stopped them.
            cut_short = self.error or "the grader stopped before every check had run"
        if cut_short is not None:
            # The check that was running when the process died is an error; later ones never ran.
            ran = {c.id for c in checks}
            missing = [p for p in self.planned if p.get("id") not in ran]
            for i, planned in enumerate(missing):
                reason = cut_short if i == 0 else "did not run: an earlier check ended the run"
                checks.append(CheckResult(str(planned.get("id")), str(planned.get("title")), "error", reason))
            message = cut_short
        if self.usage_error:
            status = "usage"
            message = self.usage_error
        elif message is not None and (cut_short is not None or not checks):
            status = "error"
        else:
            status = overall_status(checks)
        return GradeReport(exercise=self.exercise_id, file=str(self.solution), status=status, message=message,
                           device=self.device, torch=self.torch, duration_s=time.monotonic() - started,
                           checks=checks, output=output)
