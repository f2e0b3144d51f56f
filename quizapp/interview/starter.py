"""The interview's exercise file: the starter, written where the learner says, never over their work."""

from __future__ import annotations

from pathlib import Path

from quizapp.catalog import Exercise


def free_path(folder: Path, stem: str) -> Path:
    """folder/stem.py, or stem-2.py, stem-3.py...: the first name no file has yet."""
    path, n = folder / f"{stem}.py", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.py"
    return path


def suggested_path(exercise: Exercise, folder: Path) -> Path:
    """Where to offer to write the starter: folder/interview_<id>.py, or the first free variant of it."""
    return free_path(folder, f"interview_{exercise.id}")


def write_starter(exercise: Exercise, path: Path, *, replace: bool = False) -> Path:
    """Write the exercise's starter to `path`; FileExistsError when it exists and `replace` is not set,
    another OSError when it cannot be written."""
    text = exercise.starter.read_text(encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    # "x" refuses an existing file at the moment of writing, not only when the learner was asked.
    with path.open("w" if replace else "x", encoding="utf-8") as out:
        out.write(text)
    return path
