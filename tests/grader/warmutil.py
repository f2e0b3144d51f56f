"""Grade solution files through the warm grader, the way `quizapp grade --json` grades them cold.

One zygote serves the whole test session; results come back as gradeutil's `Graded`, so the same
assertions read both ways, and are kept in gradeutil's one cache. The full report of each warm grade
(with the checks' data, the plots, which --json leaves out) is kept too: `warm_report`.
"""

from __future__ import annotations

import atexit
from functools import cache
from pathlib import Path

from gradeutil import Graded, grade_many

from quizapp.catalog import load_catalog
from quizapp.grading.resolve import UsageError, resolve_exercise
from quizapp.grading.result import GradeReport
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader

_grader: WarmGrader | None = None
_reports: dict[tuple, GradeReport] = {}


def grader() -> WarmGrader:
    global _grader
    if _grader is None:
        _grader = WarmGrader()
        atexit.register(close)
    return _grader


def close() -> None:
    global _grader
    if _grader is not None:
        _grader.close()
        _grader = None


@cache
def catalog():
    return load_catalog()


def _options(args: tuple) -> tuple[Path, dict]:
    file, rest, options = Path(args[0]), list(args[1:]), {}
    while rest:
        flag, value = rest.pop(0), rest.pop(0)
        options[flag.lstrip("-")] = value
    return file, options


def grade_warm(args: tuple) -> Graded:
    """What `quizapp grade ARGS --json` says (exit code and JSON), graded by a forked child."""
    file, options = _options(args)
    catalog_ = catalog()
    try:
        exercise_id = resolve_exercise(file, options.get("exercise"), catalog_)
    except UsageError as exc:
        return Graded(2, {"status": "error", "message": str(exc), "checks": []}, str(exc))
    report = grade(file, catalog_[exercise_id], device=options.get("device", "auto"),
                   timeout=float(options.get("timeout", 120)), warm=grader())
    _reports[tuple(str(a) for a in args)] = report
    report.file = str(file)
    code = 2 if report.status == "usage" else report.exit_code
    return Graded(code, report.to_json(), "")


def grade_warm_many(arg_lists: list[tuple]) -> list[Graded]:
    """Grade each argument tuple warm, each once per session."""
    return grade_many(arg_lists, "warm")


def warm_report(*args) -> GradeReport:
    """The whole report of the session's warm grade of ARGS (graded now if it was not yet)."""
    key = tuple(str(a) for a in args)
    grade_warm_many([key])
    return _reports[key]


def comparable(report: dict) -> dict:
    """A report without what differs between any two runs (the time taken), and with the sandbox line
    cut to its Landlock part: a cold grade also runs in bubblewrap's namespaces where it is installed,
    which a forked warm grade cannot (the line says so; test_containment checks both)."""
    line = report.get("sandbox")
    if isinstance(line, str):
        landlock = line[line.index("Landlock"):] if "Landlock" in line else line
        report = {**report, "sandbox": landlock.split(";")[0].split(" + ")[-1]}
    return {k: v for k, v in report.items() if k != "duration_s"}
