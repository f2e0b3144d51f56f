"""Stopping what a grade's solution left behind, for the grader's parent side and its zygote alike.

What a solution starts may leave its process group (setsid, a double fork): the grading process
becomes a subreaper, so orphans come back to it, and after the grade it stops every child it did
not have before.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

# The longest the sweep after a grade goes on killing what the solution left behind.
SWEEP_S = 30.0


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


def descendants(roots, children: dict[int, list[int]] | None = None) -> set[int]:
    """Every process below `roots` (their children, theirs, ...), from one reading of /proc unless given."""
    children = children_by_parent() if children is None else children
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pid: int) -> bool:
    """The process exists and has not ended (a zombie not yet reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def child_pids() -> set[int]:
    """This process's child processes."""
    return set(children_by_parent().get(os.getpid(), ()))


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
