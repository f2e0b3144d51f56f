"""The label_smoothing exercise: the reference passes, the starter fails cleanly with the learner's
line, each buggy solution fails the check that names its bug (and passes the unrelated ones), two
correct solutions written another way pass, and an error names the inputs that raised it."""

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
    grade,
    grade_exercise_files,
)

EXERCISE = "label_smoothing"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["value-matches-torch", "gradient-matches-torch", "ignore-index", "all-rows-ignored", "large-logits-stable",
             "low-and-high-precision", "returns-scalar-tensor", "no-builtin-smoothing", "validation"]
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
    # the same kernel reached past the Python function (watched at the torch-function level)
    "uses_builtin_through_aten": {"no-builtin-smoothing"},
    "uses_builtin_captured": {"no-builtin-smoothing"},
    "no_validation": {"validation"},
    # Real implementations' bugs: HF transformers' LabelSmoother clamps targets to min=0 before gather (ignore_index=C
    # raises) and sums the smoothing term with dtype=torch.float32 (a float32 loss for half logits); allennlp's
    # sequence_cross_entropy_with_logits divides by count + tiny_value_of_dtype (raises for bfloat16, and gives 0
    # instead of nan when every row is ignored: both its bugs, so both checks).
    "clamps_ignore_index": {"ignore-index"},
    "upcasts_to_float32": {"low-and-high-precision"},
    "tiny_value_of_dtype": {"low-and-high-precision", "all-rows-ignored"},
    "computes_in_float32": {"low-and-high-precision"},
    "clamped_count": {"all-rows-ignored"},
    "multiplies_by_mask": {"all-rows-ignored"},
}
MAY_ALSO = {
    # A wrong formula is wrong on every input: with ignored rows, large logits and other dtypes too (and a sum of
    # no rows is 0, not nan).
    "c_minus_one": {"ignore-index", "large-logits-stable", "low-and-high-precision"},
    "sum_not_mean": {"ignore-index", "large-logits-stable", "low-and-high-precision", "all-rows-ignored"},
    # Dividing by all N rows turns an empty batch's 0 / 0 into 0 / N = 0: the same bug, on a batch with no kept row.
    "mean_over_all_rows": {"all-rows-ignored"},
    # float16 softmax underflows to 0 for logits only 17 below the row's max, so log(softmax) is -inf on ordinary
    # float16 logits, not only on logits of 1e4: the same bug.
    "log_of_softmax": {"low-and-high-precision"},
    # A float64 loss is the wrong dtype for float16 and bfloat16 logits as much as for float32 ones.
    "float64_loss": {"low-and-high-precision"},
}
ALTERNATIVES = ["ok_nll_loss", "ok_soft_targets"]
# It raises on the -100 rows of the first ignore case; the all-ignored check, which needs ignoring to work at all,
# reports that same error.
RAISES = {"gathers_ignored": {"ignore-index": "with 10 rows of 5 classes, smoothing=0.1: RuntimeError",
                              "all-rows-ignored": "with 10 rows of 5 classes, smoothing=0.1: RuntimeError"}}


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
    ("uses_builtin_through_aten", "no-builtin-smoothing", ["label_smoothing=0.1"]),
    ("uses_builtin_captured", "no-builtin-smoothing", ["label_smoothing=0.1"]),
    ("clamps_ignore_index", "ignore-index",
     ["ignore_index=5 with 5 classes", "raised RuntimeError: index 5 is out of bounds", "line 16:",
      "torch.where(keep, targets, 0)", "clamp(min=0) only makes negative values safe"]),
    ("upcasts_to_float32", "low-and-high-precision",
     ["bfloat16 logits", "expected a bfloat16 loss", "got float32", "dtype=torch.float32", ".to(logits.dtype)"]),
    ("tiny_value_of_dtype", "low-and-high-precision",
     ["bfloat16 logits", "raised TypeError: Does not support dtype torch.bfloat16", "line 18:",
      "F.cross_entropy accepts bfloat16 logits"]),
    ("tiny_value_of_dtype", "all-rows-ignored", ["every row ignored", "expected nan", "got 0", "tiny epsilon"]),
    ("computes_in_float32", "low-and-high-precision", ["float64 logits", "tolerance 1e-12", "float32 rounding"]),
    ("clamped_count", "all-rows-ignored", ["every row ignored", "expected nan (0 / 0", "got 0", "max(count, 1)"]),
    ("multiplies_by_mask", "all-rows-ignored",
     ["20 of 20 gradient entries are NaN", "exactly 0", "inf * 0", "torch.where(keep, per_row, 0)"]),
    ("log_of_softmax", "low-and-high-precision", ["float16 logits", "the loss is inf", "F.log_softmax"]),
    ("float64_loss", "low-and-high-precision", ["expected a bfloat16 loss", "got float64"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message
