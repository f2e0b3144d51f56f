"""Grade solution files, several at once, each file once per session.

An exercise's reference and starter, and anything outside the buggy matrices (hostile solutions,
broken DDP ranks), go through the public CLI cold: `quizapp grade --json` in a fresh process. The
buggy matrices (tests/grader/buggy/<exercise>/*.py, a few hundred files) go through the warm grader,
as the app and `watch` grade: same child, same checks, same report, without a fresh interpreter and
torch import per file. test_warm.py keeps the two paths equal on a sample of each exercise's bugs.
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
# The solution in every buggy folder that runs nothing at all, graded by test_does_nothing.py: none of
# its checks may pass for what never happened.
DOES_NOTHING = "does_nothing"
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


def _is_buggy(args: tuple) -> bool:
    return Path(args[0]).parent.parent.name == "buggy"


def _run(args: tuple) -> Graded:
    if _is_buggy(args):
        from warmutil import grade_warm

        return grade_warm(args)
    return run_cold(args)


def run_cold(args: tuple) -> Graded:
    """`quizapp grade ARGS --json` in a fresh process."""
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


_cold_cache: dict = {}


def grade_cold_many(arg_lists: list[tuple]) -> list[Graded]:
    """Grade each argument tuple through the CLI, whichever path grade_many would take."""
    for a in arg_lists:  # a file outside the buggy matrices was graded cold already by grade_many
        if a not in _cold_cache and a in _cache and not _is_buggy(a):
            _cold_cache[a] = _cache[a]
    todo = [a for a in dict.fromkeys(arg_lists) if a not in _cold_cache]
    with ThreadPoolExecutor(max_workers=2) as pool:
        for args, result in zip(todo, pool.map(run_cold, todo)):
            _cold_cache[args] = result
    return [_cold_cache[a] for a in arg_lists]


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


# -- the assertions every exercise's test module makes ----------------------------------------

def assert_reference_passes(exercise_dir: Path, check_ids: list[str]) -> None:
    code, report = graded(exercise_dir / "reference.py")
    assert code == 0 and report["status"] == "pass", report
    assert statuses(report) == {cid: "pass" for cid in check_ids}


def assert_starter_fails_cleanly(exercise_dir: Path, check_ids: list[str]) -> dict:
    """Every check fails or errors with a message, none from the grader itself."""
    code, report = graded(exercise_dir / "starter.py")
    assert code == 1 and report["status"] == "fail", report
    assert [c["id"] for c in report["checks"]] == list(check_ids)
    for check in report["checks"]:
        assert check["status"] in ("fail", "error"), check
        assert check["message"] and "internal grader error" not in check["message"], check
    assert "NotImplementedError" in report["checks"][0]["message"]
    return report


def assert_every_check_has_a_bug(buggy_dir: Path, must_fail: dict[str, set], check_ids: list[str],
                                 others=()) -> None:
    """Every check is failed by some bug, and every file in buggy_dir is a listed bug or one of
    `others` (correct alternatives, solutions that raise), or the solution that does nothing."""
    assert set().union(*must_fail.values()) == set(check_ids)
    assert {p.stem for p in buggy_dir.glob("*.py")} == set(must_fail) | set(others) | {DOES_NOTHING}


def assert_passes(path: Path) -> None:
    """A correct solution written another way passes every check."""
    code, report = graded(path)
    assert code == 0 and report["status"] == "pass", [c for c in report["checks"] if c["status"] != "pass"]


def assert_bug_fails(path: Path, must_fail: set, *, may_also_not_pass: set = frozenset(),
                     numbers: bool = True) -> None:
    """The bug's checks fail (with numbers in the message, if asked); every other check passes,
    except those allowed not to (e.g. a wrong shape that stops a formula from running)."""
    code, report = graded(path)
    assert code == 1
    seen = statuses(report)
    messages = {c["id"]: c["message"] for c in report["checks"] if c["status"] != "pass"}
    not_passing = set(messages)
    assert must_fail <= not_passing <= must_fail | set(may_also_not_pass), messages
    for cid in must_fail:
        assert seen[cid] == "fail", messages
        assert messages[cid] and "internal grader error" not in messages[cid], messages
        if numbers:
            assert any(ch.isdigit() for ch in messages[cid]), messages[cid]


def assert_errors_name_inputs(path: Path, errors: dict[str, str]) -> None:
    """Each listed check errors, and its message starts with the inputs that made the solution raise."""
    code, report = graded(path)
    assert code == 1
    for check in report["checks"]:
        if check["id"] in errors:
            assert check["status"] == "error", check
            assert check["message"].startswith(errors[check["id"]]), check


# -- debugging drills --------------------------------------------------------------------------

DRILL_CHECKS = ("honest-fix", "matches-fixed-run")  # after the drill's own symptom check


def assert_drill_starter_shows_symptom(exercise_dir: Path, symptom_id: str, words: tuple[str, ...]) -> None:
    """The broken script runs, and fails its symptom check with a message that describes the symptom
    in numbers; it hides nothing, so `honest-fix` passes."""
    code, report = graded(exercise_dir / "starter.py")
    assert code == 1 and report["status"] == "fail", report
    assert [c["id"] for c in report["checks"]] == [symptom_id, *DRILL_CHECKS]
    symptom = report["checks"][0]
    assert symptom["status"] == "fail", symptom
    assert all(w in symptom["message"] for w in words), symptom["message"]
    assert any(ch.isdigit() for ch in symptom["message"])
    assert statuses(report)["honest-fix"] == "pass", report


def assert_cosmetic_fix_named(path: Path, words: tuple[str, ...], *, symptom_id: str, symptom_gone: bool) -> None:
    """A fix that hides the symptom fails `honest-fix` with a message holding `words`, and fails
    `matches-fixed-run` as a consequence; its symptom check passes when the symptom is hidden."""
    code, report = graded(path)
    assert code == 1, report
    honest = next(c for c in report["checks"] if c["id"] == "honest-fix")
    assert honest["status"] == "fail", honest
    assert all(w in honest["message"] for w in words), honest["message"]
    matches = next(c for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert matches["status"] == "fail" and "this follows from the check" in matches["message"], matches
    assert statuses(report)[symptom_id] == ("pass" if symptom_gone else "fail"), report
