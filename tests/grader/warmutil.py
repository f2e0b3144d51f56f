"""Grade solution files through the warm grader, the way `quizapp grade --json` grades them cold.

One zygote serves the whole test session; results come back as gradeutil's `Graded`, so the same
assertions read both paths.
"""

from __future__ import annotations

import atexit
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gradeutil import Graded

from quizapp.catalog import load_catalog
from quizapp.grading.resolve import UsageError, resolve_exercise
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader

_grader: WarmGrader | None = None
_cache: dict = {}


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


def _options(args: tuple) -> tuple[Path, dict]:
    file, rest, options = Path(args[0]), list(args[1:]), {}
    while rest:
        flag, value = rest.pop(0), rest.pop(0)
        options[flag.lstrip("-")] = value
    return file, options


def grade_warm(args: tuple) -> Graded:
    """What `quizapp grade ARGS --json` says (exit code and JSON), graded by a forked child."""
    file, options = _options(args)
    catalog = load_catalog()
    try:
        exercise_id = resolve_exercise(file, options.get("exercise"), catalog)
    except UsageError as exc:
        return Graded(2, {"status": "error", "message": str(exc), "checks": []}, str(exc))
    report = grade(file, catalog[exercise_id].folder, exercise_id=exercise_id, device=options.get("device", "auto"),
                   timeout=float(options.get("timeout", 120)), warm=grader(), links=catalog[exercise_id].questions)
    report.file = str(file)
    code = 2 if report.status == "usage" else report.exit_code
    return Graded(code, report.to_json(), "")


def grade_warm_many(arg_lists: list[tuple]) -> list[Graded]:
    """Grade each argument tuple warm (reusing earlier results), two at a time."""
    todo = [a for a in dict.fromkeys(arg_lists) if a not in _cache]
    grader().start()
    with ThreadPoolExecutor(max_workers=2) as pool:
        for args, result in zip(todo, pool.map(grade_warm, todo)):
            _cache[args] = result
    return [_cache[a] for a in arg_lists]


def comparable(report: dict) -> dict:
    """A report without what differs between any two runs (the time taken), and with the sandbox line
    cut to its Landlock part: a cold grade also runs in bubblewrap's namespaces where it is installed,
    which a forked warm grade cannot (the line says so; test_containment checks both)."""
    line = report.get("sandbox")
    if isinstance(line, str):
        landlock = line[line.index("Landlock"):] if "Landlock" in line else line
        report = {**report, "sandbox": landlock.split(";")[0].split(" + ")[-1]}
    return {k: v for k, v in report.items() if k != "duration_s"}
