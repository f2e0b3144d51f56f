"""The label_smoothing exercise: the reference passes, the starter fails cleanly with the learner's
line, each buggy solution fails the check that names its bug (and passes the unrelated ones), two
correct solutions written another way pass, and an error names the inputs that raised it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import (assert_bug_fails, assert_errors_name_inputs, assert_every_check_has_a_bug, assert_passes,
                       assert_reference_passes, assert_starter_fails_cleanly, grade_exercise_files)
from gradeutil import grade

EXERCISE = "label_smoothing"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["value-matches-torch", "gradient-matches-torch", "ignore-index", "large-logits-stable",
             "returns-scalar-tensor", "no-builtin-smoothing", "validation"]
FORMULA = {"value-matches-torch", "gradient-matches-torch"}

# bug file -> the checks it must fail; every other check must pass, except those in MAY_ALSO.
BUGS = {
    "c_minus_one": FORMULA,
    "sum_not_mean": FORMULA,
    "mean_over_all_rows": {"ignore-index"},
    "ignored_in_uniform": {"ignore-index"},
    "log_of_softmax": {"large-logits-stable"},
    "float64_loss": {"returns-scalar-tensor"},
    "uses_builtin": {"no-builtin-smoothing"},
    "no_validation": {"validation"},
}
# A wrong formula is wrong on every input: with ignored rows and with large logits too.
MAY_ALSO = {"c_minus_one": {"ignore-index", "large-logits-stable"},
            "sum_not_mean": {"ignore-index", "large-logits-stable"}}
ALTERNATIVES = ["ok_nll_loss", "ok_soft_targets"]
RAISES = {"gathers_ignored": {"ignore-index": "with 10 rows of 5 classes, smoothing=0.1: RuntimeError"}}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_with_the_learners_line():
    report = assert_starter_fails_cleanly(FOLDER, CHECK_IDS)
    first = report["checks"][0]["message"]
    assert "label_smoothing_cross_entropy is not written yet" in first
    assert "in label_smoothing_cross_entropy: raise NotImplementedError" in first


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, [*ALTERNATIVES, *RAISES])


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug], may_also_not_pass=MAY_ALSO.get(bug, set()))


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug", sorted(RAISES))
def test_errors_name_the_inputs(bug):
    assert_errors_name_inputs(BUGGY / f"{bug}.py", RAISES[bug])


@pytest.mark.parametrize("bug, check, words", [
    ("c_minus_one", "value-matches-torch", ["C - 1", "expected loss"]),
    ("mean_over_all_rows", "ignore-index", ["kept rows"]),
    ("ignored_in_uniform", "ignore-index", ["uniform"]),
    ("sum_not_mean", "value-matches-torch", ["summed"]),
    ("log_of_softmax", "large-logits-stable", ["log_softmax"]),
    ("uses_builtin", "no-builtin-smoothing", ["label_smoothing=0.1"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message
