"""Parent side: run a solution in a child process with limits, and turn its events into a report.

No torch here: the child imports it. The parent alone writes to the progress database.

The child reports over a socket that is its stdin (see quizapp/checking/entry.py): this side writes a fresh key into
it, then accepts exactly one stream of events signed with that key, numbered from 0, in the order
a run makes them (start, each planned check once in its place, done; or an error, then done).
Anything else on the channel (a line the child did not sign, a repeat, a gap, a check out of
place) means the solution's process wrote to it: the grade stops at once and is an error.
"""

from __future__ import annotations

import hmac
import json
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizapp.checking.protocol import HELLO as CHANNEL_HELLO
from quizapp.checking.protocol import KEY_BYTES, extra_writable
from quizapp.checking.reaping import become_subreaper, child_pids, stop_escaped
from quizapp.grading import contain
from quizapp.grading.events import Checked, GradeEvent, Started, Stopped
from quizapp.grading.processes import child_env, kill_group, tree_rss_mb
from quizapp.grading.result import (
    CHECK_STATUSES,
    CheckResult,
    GradeReport,
    overall_status,
    printable,
    review_of,
    shown_text,
)

if TYPE_CHECKING:
    from quizapp.catalog import Exercise
    from quizapp.grading.warm import WarmGrader

OUTPUT_CAP = 64 * 1024
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_MB = 8192
POLL_S = 0.02
MEMORY_CHECK_S = 0.5  # how often the memory all the grade's processes hold is added up
LINE_LIMIT = 16 * 1024 * 1024  # one event line; a check's curves are a few kilobytes
TAMPERED = "the result channel was tampered with"


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


class Tampered(Exception):
    """Something other than the child's one signed stream reached the result channel."""


class ChannelReader:
    """Turns the bytes of the channel into the child's events: every line signed with the grade's
    key and numbered in sequence, or Tampered."""

    def __init__(self, key: bytes):
        self.key = key
        self.buffer = b""
        self.next_seq = 0

    def feed(self, data: bytes) -> list[dict]:
        self.buffer += data
        if b"\n" not in data:
            if len(self.buffer) > LINE_LIMIT:
                raise Tampered(f"a line of more than {LINE_LIMIT // (1024 * 1024)} MB")
            return []
        *lines, self.buffer = self.buffer.split(b"\n")
        return [self._event(line) for line in lines]

    def _event(self, line: bytes) -> dict:
        mac, _, body = line.partition(b" ")
        if not hmac.compare_digest(mac, hmac.digest(self.key, body, "sha256").hex().encode()):
            raise Tampered("a line the grader's child did not write: it is not signed with this grade's key")
        try:
            event = json.loads(body)
        except ValueError:
            raise Tampered("a signed line that is not JSON") from None
        seq = event.get("seq") if isinstance(event, dict) else None
        if type(seq) is not int or seq != self.next_seq:
            raise Tampered(f"event number {seq} where {self.next_seq} was due: a repeat, a replay or a gap "
                           "in the sequence")
        self.next_seq += 1
        del event["seq"]
        return event


class Channel:
    """The parent's end of the result channel: a socket read without blocking."""

    def __init__(self):
        self.key = secrets.token_bytes(KEY_BYTES)
        self.ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ours.sendall(CHANNEL_HELLO + self.key)  # waits in the socket until the child reads it
        self.ours.setblocking(False)
        self.reader = ChannelReader(self.key)
        self.closed = False

    def given(self) -> None:
        """The child (or the zygote) has its end now: ours must not keep it open."""
        self.theirs.close()

    def wait(self, timeout: float) -> None:
        """Until something can be read, or `timeout` seconds."""
        if self.closed:
            time.sleep(timeout)
            return
        try:
            select.select([self.ours], [], [], timeout)
        except (OSError, ValueError):
            time.sleep(timeout)

    def new_events(self) -> list[dict]:
        """The events that arrived since the last call; raises Tampered."""
        events = []
        while not self.closed:
            try:
                data = self.ours.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            events += self.reader.feed(data)
        return events

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


def child_args(exercise_dir: Path, solution: Path, device: str, memory_mb: int) -> list[str]:
    """The arguments of `python -m quizapp.checking.entry`, for a cold child and a warm one alike
    (the result channel is its stdin, named nowhere)."""
    return ["--exercise-dir", str(exercise_dir), "--solution", str(solution), "--device", device,
            "--memory-mb", str(memory_mb)]


def private_copy(solution: Path, scratch: Path, content: bytes | None = None) -> Path:
    """The file the child runs: a copy of the learner's inside the grade's folder, under the same name
    (`content`: the bytes to run, when the caller read them already; else read now).
    What the solution does to its own file (chmod 000, os.utime, a rewrite) lands on the copy, which
    goes with the grade, never on the learner's file nor on what `watch` and the app watch."""
    folder = scratch / "solution"
    folder.mkdir()
    private = folder / solution.name
    private.write_bytes(solution.read_bytes() if content is None else content)
    return private


def grade(solution: Path, exercise: Exercise, *, content: bytes | None = None, device: str = "auto",
          timeout: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB,
          on_event: Callable[[GradeEvent], None] | None = None,
          cancel: threading.Event | None = None, warm: "WarmGrader | None" = None,
          hidden: tuple[Path, ...] = (), scratch_parent: Path | None = None) -> GradeReport:
    """Grade `solution` against `exercise`; never raises for a bad solution.

    `content`: the file's bytes as the caller read them (grading.attempt reads them once, to digest
    exactly what is graded); without it the file is read here. The exercise's links (check id ->
    question ids) fill the report's `review`: the questions that its failed checks rest on.
    `on_event` hears each event (grading.events) as it arrives.

    With `warm`, the child is forked from the warm grader's zygote when it can give one (torch
    already imported); otherwise, or without it, a fresh interpreter is started (cold). Either way
    the child and its limits are the same.

    `hidden` and `scratch_parent` are a batch's (grading.batch): paths a cold child's namespaces
    hide, and where a cold grade's folder is made (a warm one's is in its zygote's folder).
    """
    started = time.monotonic()
    solution = solution.resolve()
    exercise_dir = exercise.folder
    # A warm grade's folder must be under its zygote's one writable folder (where it has one).
    scratch = Path(tempfile.mkdtemp(prefix="quizapp-grade-",
                                    dir=(warm.scratch_root() if warm is not None else None) or scratch_parent))
    workdir = scratch / "work"
    workdir.mkdir()
    (scratch / "tmp").mkdir()
    state = _RunState(exercise.id, solution, on_event, exercise.questions)
    try:
        private = private_copy(solution, scratch, content)
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        return state.report(started, f"the solution could not be read: {exc.strerror or exc}", "")
    env = child_env()
    env["TMPDIR"] = str(scratch / "tmp")  # the sandboxed child may write there and in workdir only
    args = child_args(exercise_dir, private, device, memory_mb)
    channel = Channel()
    proc = warm.spawn(args, workdir, env, device=device, channel=channel.theirs) if warm is not None else None
    reaping, contained, ours_before = False, None, set()
    if proc is not None:
        state.layers = (contain.describe(own_pids=False) if warm.contained
                        else f"no kernel namespaces (a warm grade: {warm.uncontained_because})")
    if proc is None:
        if warm is not None:  # a zygote that failed may have forked a child that took the key: a new one
            channel.close()
            channel = Channel()
        reaping = become_subreaper()
        ours_before = child_pids() if reaping else set()
        argv = [sys.executable, "-m", "quizapp.checking.entry", *args]
        contained = contain.wrap(argv, [scratch, *extra_writable(env)], workdir, hidden=hidden)
        state.layers = contain.DESCRIPTION if contained else f"no kernel namespaces ({contain.refused()})"
        try:
            proc = subprocess.Popen(contained or argv, cwd=workdir, env=env,
                                    stdin=channel.theirs.fileno(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as exc:
            channel.close()
            shutil.rmtree(scratch, ignore_errors=True)
            return state.report(started, f"could not start the grader process: {exc}", "")
    channel.given()
    collector = OutputCollector(proc.stdout)
    collector.start()
    reason = None
    memory_checked = time.monotonic()
    try:
        while proc.poll() is None:
            state.feed(channel.new_events())
            if time.monotonic() - started > timeout:
                reason = f"timed out after {timeout:g} s (the whole process group was killed); look for an endless loop or a long sleep"
                break
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
                break
            if memory_mb and time.monotonic() - memory_checked >= MEMORY_CHECK_S:
                # Each process has its own address-space cap; what they hold together is watched here,
                # so that processes a solution starts share the grade's memory instead of multiplying it.
                memory_checked = time.monotonic()
                roots = {proc.pid} | ((child_pids() - ours_before) if reaping else set())
                held = tree_rss_mb(roots)
                if held > memory_mb:
                    reason = (f"the grade's processes together held {held:,.0f} MB, more than the {memory_mb:,} MB a "
                              "grade may use (the processes a solution starts share it); the grade was stopped")
                    break
            channel.wait(POLL_S)
        if reason is None:
            state.feed(channel.new_events())  # what the child wrote before it ended
    except Tampered as exc:
        reason = f"{TAMPERED}: {exc}. This grade does not count: the solution's process wrote to the grader's channel"
        state.tampered = True
    finally:
        kill_group(proc)  # also stops anything the solution started in its group
        proc.wait()
        if reaping:
            stop_escaped(ours_before)  # and what left the group; it may hold the output pipe open
        collector.join(timeout=5)
        channel.close()
    shutil.rmtree(scratch, ignore_errors=True)
    if reason is None and not state.done:
        returncode = proc.returncode
        if contained and (sig := contain.exit_signal(returncode)):
            returncode = -sig  # bwrap reports a child killed by a signal as a shell would
        reason = _early_end(returncode, state)
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
    kind = event["event"]
    if kind == "check":
        return (all(isinstance(event.get(k), str) for k in ("id", "title", "message"))
                and event.get("status") in CHECK_STATUSES and isinstance(event.get("data", {}), dict))
    if kind == "start":
        return (isinstance(event.get("device"), str) and isinstance(event.get("torch"), str)
                and isinstance(event.get("checks"), list)
                and all(isinstance(c, dict) and isinstance(c.get("id"), str) and isinstance(c.get("title"), str)
                        for c in event["checks"]))
    if kind in ("error", "usage_error"):
        return isinstance(event.get("message"), str)
    return kind == "done"


class _RunState:
    """Accumulates the child's events into checks, forwarding each event as it arrives.

    `feed` accepts one run's events in the one order a run makes them, else raises Tampered.
    """

    def __init__(self, exercise_id: str, solution: Path, on_event, links: Mapping[str, Sequence[str]] | None = None):
        self.exercise_id = exercise_id
        self.links = links or {}
        self.solution = solution
        self.on_event = on_event
        self.checks: list[CheckResult] = []
        self.planned: list[dict] = []
        self.device = self.torch = None
        self.sandbox: str | None = None  # what protected the run, as the child's start event said
        self.layers: str | None = None  # the parent's own word on the kernel layer around the child
        self.error: str | None = None
        self.usage_error: str | None = None
        self.started = False
        self.ended = False  # an error or usage_error came: only "done" may follow
        self.done = False
        self.tampered = False

    @property
    def current(self) -> str | None:
        return self.planned[len(self.checks)]["id"] if len(self.checks) < len(self.planned) else None

    def feed(self, events: list[dict]) -> None:
        for event in events:
            self._accept(event)
            kind = event["event"]
            forward: GradeEvent
            if kind == "start":
                self.started = True
                self.device, self.torch = event["device"], event["torch"]
                self._note_sandbox(event)
                self.planned = [{"id": c["id"], "title": c["title"]} for c in event["checks"]]
                forward = Started(self.device, self.torch, tuple((c["id"], c["title"]) for c in self.planned),
                                  self.sandbox)
            elif kind == "check":
                check = CheckResult(event["id"], printable(event["title"]), event["status"],
                                    shown_text(event["message"]), event.get("data") or {})
                self.checks.append(check)
                forward = Checked(check)
            elif kind == "error":
                self.ended = True
                self._note_sandbox(event)  # an error after the sandbox was entered says which it was
                self.error = shown_text(event["message"])
                forward = Stopped(self.error)
            elif kind == "usage_error":
                self.ended = True
                self.usage_error = shown_text(event["message"])
                continue
            else:
                self.done = True
                continue
            if self.on_event is not None:
                self.on_event(forward)

    def sandbox_line(self) -> str | None:
        """The child's word on Landlock, with the parent's on the namespaces around it: bubblewrap first
        (it is in force from the child's first instruction), or why there were none."""
        if self.sandbox is None or self.layers is None:
            return self.sandbox
        inner = self.sandbox.removeprefix("sandbox: ")
        if self.layers.startswith("bubblewrap"):
            return f"sandbox: {self.layers} + {inner}"
        return f"sandbox: {inner}; {self.layers}"

    def _note_sandbox(self, event: dict) -> None:
        sandbox = event.get("sandbox")
        if isinstance(sandbox, str):
            self.sandbox = printable(sandbox)[:300]

    def _accept(self, event) -> None:
        """Raise Tampered unless `event` is the one a run can make next."""
        if not _well_formed(event):
            raise Tampered("a malformed event")
        kind = event["event"]
        if self.done:
            raise Tampered(f"an event after the end of the run ({kind})")
        if kind == "start":
            if self.started or self.ended:
                raise Tampered("a second start of the run")
        elif kind == "check":
            if not self.started or self.ended:
                raise Tampered("a check result before the run started, or after it stopped")
            due = self.planned[len(self.checks)] if len(self.checks) < len(self.planned) else None
            if due is None or (event["id"], event["title"]) != (due["id"], due["title"]):
                raise Tampered(f"a result for check '{printable(event['id'])}' out of order: "
                               f"{'no more checks were due' if due is None else repr(due['id']) + ' was due'}")
        elif kind in ("error", "usage_error"):
            if self.ended or (kind == "usage_error" and self.started):
                raise Tampered(f"an {kind} event where none can come")
        elif not self.ended and not (self.started and len(self.checks) == len(self.planned)):
            raise Tampered("the end of the run before every check had reported")

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
        if self.usage_error and not self.tampered:
            status = "usage"
            message = self.usage_error
        elif message is not None and (cut_short is not None or not checks):
            status = "error"
        else:
            status = overall_status(checks)
            if status == "fail" and not any(c.status in ("fail", "error") for c in checks):
                message = ("no check passed (every check was skipped here), and a grade needs at least one passing "
                           "check" if checks else "the exercise has no check that could run")
        return GradeReport(exercise=self.exercise_id, file=str(self.solution), status=status, message=message,
                           device=self.device, torch=self.torch, duration_s=time.monotonic() - started,
                           checks=checks, output=output, sandbox=self.sandbox_line(),
                           review=review_of(checks, self.links))
