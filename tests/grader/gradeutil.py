"""Grade solution files, each once per session, several at a time.

Two ways to grade. Cold: the public CLI, `quizapp grade --json` in a fresh process, what a learner
runs; every file outside the buggy solutions (the exercises' references and starters, hostile
solutions, DDP's broken ranks) goes this way. Warm: the warm grader (warmutil), as the app and `watch`
grade: the same child, checks and report without a fresh interpreter and torch import per file; the
buggy solutions (tests/grader/buggy/<exercise>/*.py, a few hundred files) go this way. test_warm.py
keeps the two ways equal on every reference and a sample of each exercise's buggy solutions.

Results are kept for the session, by way and arguments: every module that reads a grade reads the
same one. conftest.py grades what the collected tests will read before the first of them runs.
"""

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
BUGGY = Path(__file__).resolve().parent / "buggy"
EXERCISE_IDS = sorted(p.name for p in EXERCISES.iterdir() if (p / "checks.py").is_file())
# Grades at a time. Measured on a 2-core machine: one at a time took twice as long as two; a third gained
# about a tenth on warm grades when nothing else ran, nothing on cold ones, and lost time when other work
# shared the cores (and a DDP grade starts two ranks of its own).
WORKERS = 2
_cache: dict[tuple[str, tuple], Graded] = {}


@dataclass
class Graded:
    code: int
    report: dict
    stderr: str

    def check(self, check_id: str) -> dict:
        return next(c for c in self.report["checks"] if c["id"] == check_id)

    def status(self, check_id: str) -> str:
        return self.check(check_id)["status"]

    def message(self, check_id: str) -> str:
        return self.check(check_id)["message"]


def way_of(args: tuple) -> str:
    """How a file is graded unless a test asks otherwise: the buggy solutions warm, the rest cold."""
    return "warm" if Path(args[0]).parent.parent == BUGGY else "cold"


def run_cold(args: tuple) -> Graded:
    """`quizapp grade ARGS --json` in a fresh process."""
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", *args, "--json"], capture_output=True,
                         text=True, timeout=600, env={**os.environ})
    try:
        report = json.loads(out.stdout)
    except ValueError:
        raise AssertionError(f"stdout is not one JSON object:\n{out.stdout[:2000]}\nstderr:\n{out.stderr[-2000:]}")
    return Graded(out.returncode, report, out.stderr)


def _run(job: tuple[str, tuple]) -> Graded:
    way, args = job
    if way == "warm":
        from warmutil import grade_warm

        return grade_warm(args)
    return run_cold(args)


def _key(args, way: str | None) -> tuple[str, tuple]:
    args = tuple(str(a) for a in args)
    return (way or way_of(args), args)


def grade_jobs(jobs: list[tuple[str, tuple]], *, keep_going: bool = False) -> list[Graded | None]:
    """Grade each (way, args) not graded yet this session, WORKERS at a time. With `keep_going`, a
    grade that raises is left out (the test that reads it grades it again, and shows the error)."""
    todo = [j for j in dict.fromkeys(jobs) if j not in _cache]
    if any(way == "warm" for way, _ in todo):
        from warmutil import grader

        grader().start()

    def run(job):
        try:
            return _run(job)
        except Exception:
            if keep_going:
                return None
            raise

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for job, result in zip(todo, pool.map(run, todo)):
            if result is not None:
                _cache[job] = result
    return [_cache.get(j) for j in jobs]


def grade_many(arg_lists: list[tuple], way: str | None = None) -> list[Graded]:
    """Grade each argument tuple (file first, then options), each once per session and way."""
    return grade_jobs([_key(a, way) for a in arg_lists])


def grade_cold_many(arg_lists: list[tuple]) -> list[Graded]:
    """Grade each argument tuple through the CLI, whichever way grade_many would take."""
    return grade_many(arg_lists, "cold")


def grade(*args) -> Graded:
    return grade_many([args])[0]


def graded(path) -> tuple[int, dict]:
    """(exit code, JSON report) of grading one file."""
    result = grade(path)
    return result.code, result.report


def message(path, check_id: str) -> str:
    return grade(path).message(check_id)


def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


# -- an exercise's grades: its reference and starter, and its buggy solutions as their headers ask ----

def header_of(path: Path):
    """The header of a buggy solution, or None where it does not read (test_mutants says why)."""
    from quizapp.grading import mutants

    try:
        return mutants.read(path)
    except (mutants.HeaderError, OSError, UnicodeDecodeError):
        return None


def mutant_args(path: Path, expect) -> tuple[str, ...]:
    """How a buggy solution is graded: on the device its header names, if it names one."""
    return (str(path), "--device", expect.device) if expect is not None and expect.device else (str(path),)


def exercise_jobs(exercise: str) -> list[tuple[str, tuple]]:
    """Every grade test_mutants reads for one exercise, as (way, args)."""
    from quizapp.grading import mutants

    jobs = [_key((EXERCISES / exercise / name,), None) for name in ("reference.py", "starter.py")]
    return jobs + [_key(mutant_args(p, header_of(p)), None) for p in mutants.buggy_files(BUGGY / exercise)]


def exercise_record(folder: Path, exercise_id: str | None = None):
    """The catalog's record of the exercise in `folder` (a copy, or a folder a test wrote), as the runner
    takes it: a shipped exercise's links come with it, a test's own folder has none."""
    from quizapp.catalog import Exercise, load_catalog

    exercise_id = exercise_id or folder.name
    shipped = load_catalog().get(exercise_id)
    if shipped is not None:
        return shipped._replace(folder=folder)
    return Exercise(exercise_id, exercise_id, "", 1, "", (), folder)
