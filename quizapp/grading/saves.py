"""Saves of a solution file, and what changed between two grades of it: for `quizapp watch` and the app.

Both regrade after a save. The folder is watched, not the file: editors that save atomically write
a new file and rename it over the old one, which a watch on the old file would never see.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from quizapp.grading.result import GradeReport

# A save is graded once the folder has been quiet this long: editors write in bursts.
QUIET_MS = 50


def file_state(path: Path) -> str | None:
    """What identifies one save of the file: a digest of its content; None while it is missing or
    unreadable. Not its time: touching the file (a solution's os.utime, a `touch`) is not a save,
    and a watch that regraded on it could be made to regrade for ever."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def watch_saves(path: Path, on_save: Callable[[Exception | None], object], stop: threading.Event) -> None:
    """Call `on_save(None)` after each burst of changes to `path`, until `stop` is set.

    Blocks: run it in a thread. If watching fails (the folder went away), calls `on_save(error)`
    once and returns.
    """
    import watchfiles

    name = path.name
    try:
        for _ in watchfiles.watch(path.parent, watch_filter=lambda _change, p: os.path.basename(p) == name,
                                  step=QUIET_MS, stop_event=stop, recursive=False, raise_interrupt=False):
            on_save(None)
    except Exception as exc:  # noqa: BLE001 - e.g. the folder went away: the caller says so
        on_save(exc)


def change_summary(was: dict[str, str], now: dict[str, str]) -> str:
    """What changed between two grades, from check id -> status maps: "2 checks newly pass, 1 newly fails"."""
    passing = sum(1 for cid, status in now.items() if status == "pass" and was.get(cid) != "pass")
    failing = sum(1 for cid, status in now.items() if status in ("fail", "error") and was.get(cid) in ("pass", "skip"))
    parts = []
    if passing:
        parts.append(f"{passing} check{'s' if passing > 1 else ''} newly pass{'' if passing > 1 else 'es'}")
    if failing:
        noun = "" if parts else (" checks" if failing > 1 else " check")
        parts.append(f"{failing}{noun} newly fail{'' if failing > 1 else 's'}")
    if not parts:
        return "No check changed since the last grade."
    return ", ".join(parts) + "."


def changes_since(before: GradeReport | None, now: GradeReport) -> str:
    """The same between two reports; empty for the first grade."""
    if before is None:
        return ""
    return change_summary({c.id: c.status for c in before.checks}, {c.id: c.status for c in now.checks})
