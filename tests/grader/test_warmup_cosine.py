"""The warmup_cosine exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it); a correct
LambdaLR solution written another way passes, and an error names the inputs that raised it."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_errors_name_inputs,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade

EXERCISE = "warmup_cosine"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["schedule-formula", "first-step-zero", "floor-past-end", "validation", "param-groups", "resume"]

# bug file -> the checks it must fail; every other check must pass.
BUGS = {
    "transformers_rises_past_end": {"floor-past-end"},
    "no_warmup_zero_first_step": {"schedule-formula", "first-step-zero"},
    "no_validation": {"validation"},
    "ignores_min_lr": {"schedule-formula", "floor-past-end"},
    "single_group_only": {"param-groups"},
    "not_resumable": {"resume"},
    # starts at lr 0 but climbs too slowly: the formula's bug alone, not first-step-zero's
    "ramp_too_slow": {"schedule-formula"},
}
ALTERNATIVES = ["ok_lambdalr_clamped"]
# solutions that raise: bug file -> {check id: how its error message starts}
RAISES = {
    "no_max_one_divides_by_zero": {
        check: "with warmup_steps=20, total_steps=20, min_lr_ratio=0.0, scheduler.step() number 20: ZeroDivisionError"
        for check in ("schedule-formula", "floor-past-end")},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(FOLDER, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, [*ALTERNATIVES, *RAISES])


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


def test_transformers_bug_message_names_the_rise():
    _, report = grade(BUGGY / "transformers_rises_past_end.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "floor-past-end")
    assert "rising again" in message and "transformers" in message


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug", sorted(RAISES))
def test_errors_name_the_inputs(bug):
    assert_errors_name_inputs(BUGGY / f"{bug}.py", RAISES[bug])
