"""The interview's exercise file: the starter, written next to the learner under a name of its own."""

from __future__ import annotations

from pathlib import Path

from quizapp.catalog import Exercise


def free_path(folder: Path, stem: str) -> Path:
    """folder/stem.py, or stem-2.py, stem-3.py...: an earlier file of the learner's is never overwritten."""
    path, n = folder / f"{stem}.py", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.py"
    return path


def write_starter(exercise: Exercise, folder: Path) -> Path:
    """Write the exercise's starter to a fresh file in `folder`; raises OSError when it cannot."""
    path = free_path(folder, f"interview_{exercise.id}")
    text = exercise.starter.read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
