"""The fake_quant exercise: the reference passes, the starter fails cleanly with the learner's line,
each buggy solution fails the check that names its bug (and passes the unrelated ones), and a
custom autograd.Function written another way passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import (assert_bug_fails, assert_every_check_has_a_bug, assert_passes, assert_reference_passes,
                       assert_starter_fails_cleanly, grade, grade_exercise_files)

EXERCISE = "fake_quant"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["per-tensor-matches-torch", "per-channel-matches-torch", "round-half-even", "all-zero",
             "straight-through-gradient", "dtype-shape-kept", "validation"]

# bug file -> the checks it must fail; every other check must pass, except those in MAY_ALSO.
BUGS = {
    "floor_half_up": {"round-half-even"},
    "no_ste": {"straight-through-gradient"},
    "scale_not_detached": {"straight-through-gradient"},
    "zero_scale_nan": {"all-zero"},
    "unsigned_qmax": {"per-tensor-matches-torch", "per-channel-matches-torch", "validation"},
    "reduces_over_axis": {"per-channel-matches-torch"},
    "always_float32": {"dtype-shape-kept"},
    "no_validation": {"validation"},
    "in_place": {"dtype-shape-kept"},
}
# Levels to 2**bits - 1 move the ties and the zero channel's neighbours too.
MAY_ALSO = {"unsigned_qmax": {"round-half-even", "all-zero"}}
ALTERNATIVES = ["ok_autograd_function"]


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_with_the_learners_line():
    report = assert_starter_fails_cleanly(FOLDER, CHECK_IDS)
    first = report["checks"][0]["message"]
    assert "fake_quantize is not written yet" in first and "in fake_quantize: raise NotImplementedError" in first


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug], may_also_not_pass=MAY_ALSO.get(bug, set()))


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug, check, words", [
    ("floor_half_up", "round-half-even", ["0.5 -> expected 0, got 1"]),
    ("no_ste", "straight-through-gradient", ["all zeros"]),
    ("scale_not_detached", "straight-through-gradient", ["x.detach()"]),
    ("zero_scale_nan", "all-zero", ["NaN"]),
    ("unsigned_qmax", "per-tensor-matches-torch", ["2**bits - 1"]),
    ("reduces_over_axis", "per-channel-matches-torch", ["*except* axis"]),
    ("in_place", "dtype-shape-kept", ["in place"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message
