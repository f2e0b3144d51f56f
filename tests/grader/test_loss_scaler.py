"""The loss_scaler exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import (assert_bug_fails, assert_every_check_has_a_bug, assert_reference_passes,
                       assert_starter_fails_cleanly, grade_exercise_files)
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
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(FOLDER, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


def test_nan_bug_message_names_the_nan():
    _, report = grade(BUGGY / "forgets_nan.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "skip-on-overflow")
    assert "nan" in message and "isfinite" in message
