"""Keep a finished grade in the progress store: the one place a grade is written, for the CLI and the app
(through grading.attempt, which every front end grades with)."""

from __future__ import annotations

from pathlib import Path

from quizapp.grading.result import GradeReport
from quizapp.study.due import file_digest
from quizapp.study.store import Store, StoreError

_READ_NOW = object()


def record_grade(report: GradeReport, file: Path, store: Store | None = None, *,
                 digest: str | None | object = _READ_NOW) -> str | None:
    """Save the attempt in `store` (the process's own store when None); returns why it could not be
    saved, or None.

    The row and its report name the file by its absolute, resolved path, whatever a front end shows:
    the one path the store's readers (the app's "your file") can find the file by again, whichever
    folder the grade was started from. `digest` is the sha256 of what was graded, taken before the grade (a save
    while the checks ran must not lend its digest to the old content's result); without it, the
    file is read now.
    """
    path = file.resolve()
    file_hash = file_digest(path) if digest is _READ_NOW else digest
    try:
        opened = store is None
        if opened:
            store = Store.open()
        try:
            store.record_grade(report.exercise, status=report.status, checks_passed=report.passed,
                               checks_total=report.counted, device=report.device, duration_s=report.duration_s,
                               file_path=str(path), file_hash=file_hash,
                               report={**report.to_json(), "file": str(path)})
        finally:
            if opened:
                store.close()
    except StoreError as exc:  # e.g. another process held the write lock too long
        return str(exc)
    except OSError as exc:
        return f"{exc} (database: {store.path if store is not None else 'not opened'})"
    return None
