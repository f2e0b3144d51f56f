"""Which exercise a solution file is: --exercise wins, else the marker in its first 20 lines."""

from __future__ import annotations

import re
from pathlib import Path

MARKER = re.compile(r"#\s*quizapp:\s*exercise\s*=\s*([A-Za-z0-9_\-]+)")
MARKER_LINES = 20


class UsageError(Exception):
    """The command was misused (exit code 2)."""


def marker_exercise(path: Path) -> str | None:
    with path.open("rb") as fh:
        head = [fh.readline() for _ in range(MARKER_LINES)]
    for raw in head:
        match = MARKER.search(raw.decode("utf-8", errors="replace"))
        if match:
            return match.group(1)
    return None


def resolve_exercise(path: Path, exercise: str | None, known) -> str:
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give the solution's .py file")
    chosen = exercise or marker_exercise(path)
    if chosen is None:
        raise UsageError(f"{path} does not say which exercise it solves: add `# quizapp: exercise=ID` "
                         f"near the top or pass --exercise ID (one of: {', '.join(sorted(known))})")
    if chosen not in known:
        raise UsageError(f"unknown exercise '{chosen}' (known: {', '.join(sorted(known))})")
    return chosen
