"""Grade solution files through the public CLI, several at once, each file once per session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
_cache: dict = {}


@dataclass
class Graded:
    code: int
    report: dict
    stderr: str

    def check(self, check_id: str) -> dict:
        return next(c for c in self.report["checks"] if c["id"] == check_id)

    def status(self, check_id: str) -> str:
        return self.check(check_id)["status"]


def _run(args: tuple) -> Graded:
    env = {**os.environ}
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", *args, "--json"], capture_output=True,
                         text=True, timeout=600, env=env)
    try:
        report = json.loads(out.stdout)
    except ValueError:
        raise AssertionError(f"stdout is not one JSON object:\n{out.stdout[:2000]}\nstderr:\n{out.stderr[-2000:]}")
    return Graded(out.returncode, report, out.stderr)


def grade_many(arg_lists: list[tuple]) -> list[Graded]:
    """Grade each argument tuple (file first), reusing earlier results; two at a time."""
    todo = [a for a in dict.fromkeys(arg_lists) if a not in _cache]
    with ThreadPoolExecutor(max_workers=2) as pool:
        for args, result in zip(todo, pool.map(_run, todo)):
            _cache[args] = result
    return [_cache[a] for a in arg_lists]


def grade(*args) -> Graded:
    return grade_many([tuple(str(a) for a in args)])[0]


def graded(path) -> tuple[int, dict]:
    """(exit code, JSON report) of grading one file."""
    result = grade(path)
    return result.code, result.report


def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def grade_exercise_files(exercise_dir: Path, buggy_dir: Path) -> None:
    """Grade an exercise's reference, starter and every buggy file up front, two at a time."""
    files = [exercise_dir / "reference.py", exercise_dir / "starter.py", *sorted(buggy_dir.glob("*.py"))]
    grade_many([(str(f),) for f in files])
