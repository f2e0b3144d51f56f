"""Process plumbing shared by the grader's parent side, its zygote and the commands that run grades.

A grade's child runs in a process group of its own; what it starts may leave that group (setsid,
a double fork), so the grader also becomes a subreaper and stops every child it did not have
before. Ctrl+C and SIGTERM set an event that the running grade or watch polls, instead of
raising KeyboardInterrupt through code that must clean up first.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# More folders every grade may write (os.pathsep-separated; the test suite's temp folder): set in the
# grader's environment, read by the parent (bubblewrap's writable binds) and the child (Landlock's rules).
EXTRA_WRITABLE_ENV = "QUIZAPP_GRADE_WRITABLE"

# The longest the sweep after a grade goes on killing what the solution left behind.
SWEEP_S = 30.0



def extra_writable(env) -> list[Path]:
    """The folders EXTRA_WRITABLE_ENV names in `env` that exist."""
    return [Path(p) for p in env.get(EXTRA_WRITABLE_ENV, "").split(os.pathsep) if p and os.path.isdir(p)]


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
    return env


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


def children_by_parent() -> dict[int, list[int]]:
    """Every process's children, by parent pid, read from /proc once (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat") if Path("/proc").is_dir() else ():
        try:
            ppid = int(entry.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
        children.setdefault(ppid, []).append(int(entry.parent.name))
    return children


def child_pids() -> set[int]:
    """This process's child processes."""
    return set(children_by_parent().get(os.getpid(), ()))


def tree_rss_mb(roots: set[int]) -> float:
    """The resident memory, in MB, of the processes in `roots` and all their descendants (Linux: read
    from /proc; 0 elsewhere)."""
    children = children_by_parent()
    seen, todo, pages = set(), list(roots), 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass  # ended meanwhile, or no /proc
        todo.extend(children.get(pid, ()))
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20 if pages else 0.0  # no sysconf where there is no /proc


def stop_escaped(keep: set[int], within_s: float = SWEEP_S) -> None:
    """Kill and reap our children but `keep` (say, those we had before the grade); their own orphans
    come to us as each parent dies, so this goes on until none is left: a chain of processes that each
    left the session (setsid) falls one link a pass, however long it is (within `within_s`)."""
    import time

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
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
