"""Process plumbing of the grader's parent side and the commands that run grades.

A grade's child runs in a process group of its own (stopped whole by kill_group; what left the group
is stopped by `quizapp.checking.reaping`). Ctrl+C and SIGTERM set an event that the running grade or
watch polls, instead of raising KeyboardInterrupt through code that must clean up first.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from quizapp.checking.reaping import descendants

CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# A watch also ends when its terminal goes away.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def child_env() -> dict[str, str]:
    """The environment of a grade's child, cold or warm: ours, with quizapp importable, unbuffered."""
    import quizapp

    env = dict(os.environ)
    package_root = str(Path(quizapp.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    # No BLAS thread pool started at numpy's import (the zygote does the same): a thread started before
    # the sandbox keeps its rights on kernels before Landlock ABI 8.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    # c10d's C++ logger writes warnings straight to stderr: the multi-rank exercises' TCPStore says
    # on every connect that the sandbox (no DNS) cannot name the client's host. Errors still show.
    env.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    return env


def tree_rss_mb(roots: set[int]) -> float:
    """The resident memory, in MB, of the processes in `roots` and all their descendants (Linux: read
    from /proc; 0 elsewhere)."""
    pages = 0
    for pid in set(roots) | descendants(roots):
        try:
            pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass  # ended meanwhile, or no /proc
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20 if pages else 0.0  # no sysconf where there is no /proc


def kill_group(proc) -> None:
    """SIGKILL the process group `proc` leads (a Popen, or a warm child whose keeper leads it)."""
    if hasattr(proc, "kill_group"):  # a warm child: its keeper leads the group, and may be gone already
        proc.kill_group()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@contextmanager
def signals_set(event: threading.Event, signals=CANCEL_SIGNALS) -> Iterator[threading.Event]:
    """While inside, each of `signals` sets `event` (the grade or watch polling it then stops cleanly)."""
    previous = {sig: signal.signal(sig, lambda *_: event.set()) for sig in signals}
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
