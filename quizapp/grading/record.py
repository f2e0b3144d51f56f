"""Keep a finished grade in the progress store: the one place a grade is written, for the CLI and the app."""

from __future__ import annotations

from pathlib import Path

from quizapp.grading.result import GradeReport
from quizapp.study.due import file_digest
from quizapp.study.store import Store, StoreError


def record_grade(report: GradeReport, file: Path, store: Store | None = None) -> str | None:
    """Save the attempt in `store` (the process's own store when None); returns why it could not be saved, or None."""
    try:
        opened = store is None
        if opened:
            store = Store.open()
        try:
            store.record_grade(report.exercise, status=report.status, checks_passed=report.passed,
                               checks_total=report.counted, device=report.device, duration_s=report.duration_s,
                               file_path=str(file.resolve()), file_hash=file_digest(file), report=report.to_json())
        finally:
            if opened:
                store.close()
    except StoreError as exc:  # e.g. another process held the write lock too long
        return str(exc)
    except OSError as exc:
        return f"{exc} (database: {store.path if store is not None else 'not opened'})"
    return None
