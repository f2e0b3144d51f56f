"""The warm grader, parent side: start the zygote (`zygote.py`) and ask it for a grade's child.

No torch here. The zygote is a process of its own, in a session of its own, that this side talks
to over a Unix socket pair; it ends when this side closes its end (or dies). `runner.grade`
drives a `WarmChild` exactly as it drives a cold `Popen`: same timeout, output cap, result channel
(the child's stdin, handed over with the request), and process-group kill. When the zygote cannot give a child (it died, is starting up again, or
cannot fork safely), `spawn` returns None and the runner grades cold: the learner sees a slower
grade, never an error of ours.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from quizapp.checking.protocol import extra_writable
from quizapp.grading import contain
from quizapp.grading.processes import child_env

READY_TIMEOUT_S = 180.0  # torch's first import on a busy machine can take a minute
FORK_TIMEOUT_S = 15.0  # from a request to the child's pid
EXIT_GRACE_S = 10.0  # after the child ends (or is killed), how long its keeper may take to report


class WarmChild:
    """A grade's child forked by the zygote, with the face of a `Popen` that the runner uses.

    `pid` is the grade's process group (its keeper leads it; the child runs in it), so killing
    the group stops the child and everything it started.
    """

    def __init__(self, sock: socket.socket, stdout, pgid: int, child_pid: int):
        self.sock = sock
        self.stdout = stdout
        self.pid = pgid
        self.child_pid = child_pid
        self.returncode: int | None = None
        self._exit: int | None = None

    def _read(self, timeout: float) -> None:
        if self.returncode is not None:
            return
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return
        try:
            data = self.sock.recv(4096)
        except OSError:
            data = b""
        if data:
            try:
                message = json.loads(data)
            except ValueError:
                return
            if isinstance(message, dict) and isinstance(message.get("exit"), int):
                self._exit = message["exit"]
            return
        # The keeper is gone. Without its report the child died with it (a kill of the group).
        self.returncode = self._exit if self._exit is not None else -signal.SIGKILL
        self.sock.close()

    def poll(self) -> int | None:
        while self.returncode is None:
            before = self._exit
            self._read(0)
            if self._exit == before:
                break
        return self.returncode

    def kill_group(self) -> None:
        if self.returncode is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def wait(self) -> int:
        deadline = time.monotonic() + EXIT_GRACE_S
        while self.returncode is None:
            if time.monotonic() > deadline:
                self.kill_group()
                deadline = time.monotonic() + EXIT_GRACE_S
            self._read(0.05)
        return self.returncode


class WarmGrader:
    """One zygote, started on first use and again whenever it is gone; thread-safe."""

    def __init__(self, *, ready_timeout: float = READY_TIMEOUT_S, python: str | None = None,
                 scratch_parent: Path | None = None, hidden: tuple[Path, ...] = (), fresh_shm: bool = False):
        """`scratch_parent`: where the zygote's scratch folders are made (default: the temp folder).
        `hidden`: paths its grades must not see (contain.options): a batch hides the class's
        submissions, its results, and the folder of every worker's scratch folders, its own excepted.
        `fresh_shm`: each grade ends with the zygote's private /dev/shm emptied, so that the next one
        (another student's, in a batch) finds nothing there; only for one grade at a time."""
        self.scratch_parent = scratch_parent
        self.hidden = hidden
        self.fresh_shm = fresh_shm
        self.ready_timeout = ready_timeout
        self.python = python or sys.executable
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._ready = False
        self.cuda_fork_safe = False  # the zygote says so once ready
        self.failure: str | None = None  # why the zygote could not start: grades are cold from then on
        # Where every grade's folder goes: the one folder (besides the caller's extra ones) that the
        # zygote's namespaces mount writable. Made with the zygote, removed with it.
        self._scratch_root: Path | None = None
        self._roots: list[Path] = []  # every one made, removed on close
        self.contained = False  # the zygote runs inside bubblewrap's namespaces
        self.uncontained_because: str | None = None

    @property
    def zygote_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def start(self) -> None:
        """Start the zygote in the background (it takes about a torch import to be ready)."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self.failure is not None or (self._proc is not None and self._proc.poll() is None):
            return
        self._discard()
        if not os.access(self.python, os.X_OK):  # inside bwrap the exec would fail out of our sight
            self.failure = f"could not start the warm grader: no Python to run at {self.python}"
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cmd = [self.python, "-m", "quizapp.checking.zygote", "--control", str(theirs.fileno())]
        env = child_env()
        self._scratch_root = Path(tempfile.mkdtemp(prefix="quizapp-warm-", dir=self.scratch_parent))
        self._roots.append(self._scratch_root)
        env["TMPDIR"] = str(self._scratch_root)  # the zygote's own /tmp is read-only in its namespaces
        contained = contain.wrap(cmd, [self._scratch_root, *extra_writable(env)], own_pids=False, hidden=self.hidden)
        self.contained = contained is not None
        self.uncontained_because = None if contained else contain.refused()
        try:
            self._proc = subprocess.Popen(contained or cmd, env=env, pass_fds=[theirs.fileno()],
                                          start_new_session=True, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.failure = f"could not start the warm grader: {exc}"
            ours.close()
            return
        finally:
            theirs.close()
        self._control = ours

    def _ensure_ready(self) -> bool:
        self._ensure_started()
        if self._control is None:
            return False
        if self._ready:
            return True
        ready, _, _ = select.select([self._control], [], [], self.ready_timeout)
        message = _receive(self._control) if ready else None
        if not (isinstance(message, dict) and message.get("ready") is True):
            self.failure = (message or {}).get("error") or "the warm grader did not start"
            self._discard()
            return False
        self._ready = True
        self.cuda_fork_safe = message.get("cuda_fork_safe") is True
        return True

    def _discard(self) -> None:
        """Stop the zygote (closing our end is enough: it stops its grades and exits)."""
        if self._control is not None:
            self._control.close()
            self._control = None
        self._ready = False
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        # The folder stays: a zygote that stepped down leaves its running grades to finish in it.
        self._scratch_root = None

    def scratch_root(self) -> Path | None:
        """The folder a grade's own folder must be made in, while a zygote is up (None: anywhere)."""
        with self._lock:
            self._ensure_started()
            return self._scratch_root if self._scratch_root is not None and self._scratch_root.is_dir() else None

    def spawn(self, args: list[str], cwd: Path, env: dict[str, str], *, device: str = "cpu",
              channel: socket.socket) -> WarmChild | None:
        """Fork a grade's child running `quizapp.checking.entry` with `args` in `cwd` and the
        `channel` socket as its stdin, or None.

        For a grade that may use CUDA (`device` auto or cuda), None too when the zygote has the
        CUDA driver loaded: CUDA does not survive a fork once initialised.
        """
        for _ in range(2):  # a zygote that died or stepped down is replaced once, silently
            with self._lock:
                if not self._ensure_ready():
                    return None
                if device != "cpu" and not self.cuda_fork_safe:
                    return None
                child = self._request(args, cwd, env, channel)
                if child is not None:
                    return child
                self._discard()
        return None

    def _request(self, args: list[str], cwd: Path, env: dict[str, str], channel: socket.socket) -> WarmChild | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe()
        # Only a contained zygote's /dev/shm is its own: elsewhere it is the machine's, never emptied.
        payload = json.dumps({"args": args, "cwd": str(cwd), "env": env,
                              "clear_shm": self.fresh_shm and self.contained}).encode()
        try:
            socket.send_fds(self._control, [payload], [theirs.fileno(), out_w, channel.fileno()])
        except OSError:
            ours.close()
            os.close(out_r)
            return None
        finally:
            theirs.close()
            os.close(out_w)
        ready, _, _ = select.select([ours], [], [], FORK_TIMEOUT_S)
        message = _receive(ours) if ready else None
        if not (isinstance(message, dict) and isinstance(message.get("pgid"), int)):
            ours.close()
            os.close(out_r)
            return None
        return WarmChild(ours, os.fdopen(out_r, "rb"), message["pgid"], message["pid"])

    def close(self) -> None:
        with self._lock:
            self._discard()
            for root in self._roots:
                shutil.rmtree(root, ignore_errors=True)
            self._roots.clear()


def _receive(sock: socket.socket) -> dict | None:
    try:
        data = sock.recv(1024 * 1024)
        message = json.loads(data) if data else None
    except (OSError, ValueError):
        return None
    return message if isinstance(message, dict) else None


_shared: WarmGrader | None = None
_shared_lock = threading.Lock()


def shared() -> WarmGrader:
    """The process's warm grader; its zygote is stopped when the process exits."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WarmGrader()
            atexit.register(_shared.close)
        return _shared
