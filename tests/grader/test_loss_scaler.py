"""The loss_scaler exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import grade_exercise_files, statuses
from gradeutil import graded as grade

EXERCISE = "loss_scaler"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["scale-trajectory", "skip-on-overflow", "return-value", "clean-step-update", "missing-grads",
             "growth-only-if-finite"]

# bug file -> the checks it must fail; every other check must pass.
BUGS = {
    "no_backoff": {"scale-trajectory"},
    "growth_never_resets_count": {"scale-trajectory"},
    "steps_on_inf": {"skip-on-overflow"},
    "forgets_nan": {"scale-trajectory", "skip-on-overflow", "return-value"},
    "no_unscale": {"clean-step-update"},
    "wrong_return": {"return-value"},
    "crashes_on_missing_grad": {"missing-grads"},
    "grows_to_inf": {"growth-only-if-finite"},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    code, report = grade(FOLDER / "reference.py")
    assert code == 0, report
    assert report["status"] == "pass"
    assert statuses(report) == {cid: "pass" for cid in CHECK_IDS}
    curves = next(c for c in report["checks"] if c["id"] == "scale-trajectory").get("data", {}).get("curves")
    if curves is not None:  # the JSON may or may not carry check data; when it does, it is the scale curve
        assert set(curves["series"]) == {"yours", "GradScaler"}


def test_starter_fails_cleanly():
    code, report = grade(FOLDER / "starter.py")
    assert code == 1
    assert report["status"] == "fail"
    assert [c["id"] for c in report["checks"]] == CHECK_IDS
    for check in report["checks"]:
        assert check["status"] in ("fail", "error"), check
        assert check["message"], check
        assert "internal grader error" not in check["message"]


def test_every_check_is_failed_by_some_bug():
    assert set().union(*BUGS.values()) == set(CHECK_IDS)
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_check(bug):
    code, report = grade(BUGGY / f"{bug}.py")
    assert code == 1
    seen = statuses(report)
    for cid in CHECK_IDS:
        expected = "fail" if cid in BUGS[bug] else "pass"
        assert seen[cid] == expected, (cid, next(c for c in report["checks"] if c["id"] == cid))
        if expected == "fail":
            message = next(c["message"] for c in report["checks"] if c["id"] == cid)
            assert any(ch.isdigit() for ch in message), message  # says what it saw, in numbers


def test_nan_bug_message_names_the_nan():
    _, report = grade(BUGGY / "forgets_nan.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "skip-on-overflow")
    assert "nan" in message and "isfinite" in message
