"""The fake_quant exercise: the reference passes, the starter fails cleanly with the learner's line,
each buggy solution fails the check that names its bug (and passes the unrelated ones), and a
custom autograd.Function written another way passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade,
    grade_exercise_files,
)

EXERCISE = "fake_quant"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["per-tensor-matches-torch", "per-channel-matches-torch", "round-half-even", "all-zero", "tiny-amax",
             "straight-through-gradient", "dtype-shape-kept", "x-unchanged", "validation"]

# bug file -> the checks it must fail; every other check must pass, except those in MAY_ALSO.
# A wrong scale (unsigned_qmax, distiller_half_levels, lsq_step_clips) cannot pass any check that compares
# values: per tensor, per channel, the ties (scale 1 there) and the 16-bit values in "validation".
BUGS = {
    "floor_half_up": {"round-half-even"},
    "distiller_half_levels": {"round-half-even", "per-tensor-matches-torch", "per-channel-matches-torch",
                              "validation"},
    "no_ste": {"straight-through-gradient"},
    "scale_not_detached": {"straight-through-gradient"},
    "ste_masks_at_amax": {"straight-through-gradient"},
    "lsq_step_clips": {"straight-through-gradient", "round-half-even", "per-tensor-matches-torch",
                       "per-channel-matches-torch", "validation"},
    "zero_scale_nan": {"all-zero"},
    "ao_eps_floor": {"tiny-amax"},
    "tiny_amax_zeroed": {"tiny-amax"},
    "unsigned_qmax": {"per-tensor-matches-torch", "per-channel-matches-torch", "validation"},
    "reduces_over_axis": {"per-channel-matches-torch"},
    "always_float32": {"dtype-shape-kept"},
    "float32_buffer_promotes": {"dtype-shape-kept"},
    "no_validation": {"validation"},
    "in_place": {"x-unchanged"},
    # Returns x itself, quantized in place: its gradient is autograd's identity, no estimator at all.
    "returns_x_mutated": {"x-unchanged", "straight-through-gradient"},
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
    ("floor_half_up", "round-half-even", ["0.5 -> expected 0, got 1", "floor(x / scale + 0.5)"]),
    ("distiller_half_levels", "round-half-even", ["scale is wrong, not the rounding", "-3.5 -> -3.98431",
                                                  "multiples of 0.996078 = amax / 127.5"]),
    ("unsigned_qmax", "round-half-even", ["scale is wrong, not the rounding", "amax / 255"]),
    ("no_ste", "straight-through-gradient", ["all zeros"]),
    ("scale_not_detached", "straight-through-gradient", ["holding amax", "x.detach()"]),
    ("ste_masks_at_amax", "straight-through-gradient", ["exactly 0 at the 1 position where |x| reaches amax",
                                                        "masks the gradient", "clipped STE"]),
    ("lsq_step_clips", "straight-through-gradient", ["exactly 0 at", "masks the gradient", "clipped STE"]),
    ("zero_scale_nan", "all-zero", ["NaN"]),
    ("ao_eps_floor", "tiny-amax", ["amax 1e-06", "matches scale = max(amax / qmax, 1.19e-07)", "the floor torch.ao"]),
    ("tiny_amax_zeroed", "tiny-amax", ["all zeros", "amax is 1e-08", "scale = amax / qmax = 7.87e-11"]),
    ("unsigned_qmax", "per-tensor-matches-torch", ["2**bits - 1"]),
    ("reduces_over_axis", "per-channel-matches-torch", ["*except* axis"]),
    ("always_float32", "dtype-shape-kept", ["expected dtype float64, got float32", ".float()"]),
    ("float32_buffer_promotes", "dtype-shape-kept", ["expected dtype bfloat16, got float32", "torch.zeros(...)",
                                                     ".to(x.dtype)"]),
    ("in_place", "x-unchanged", ["x changed in", "though the result is a new tensor", "in-place"]),
    ("returns_x_mutated", "x-unchanged", ["the result is x itself, quantized in place", "x changed in"]),
    ("returns_x_mutated", "straight-through-gradient", ["the output is x itself",
                                                        "no straight-through estimator was exercised"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message


@pytest.mark.parametrize("bug, check, wrong_cause", [
    ("distiller_half_levels", "round-half-even", "floor("),  # a wrong scale is not a rounding mode
    ("lsq_step_clips", "round-half-even", "floor("),
    ("ste_masks_at_amax", "straight-through-gradient", "x.detach()"),  # a mask is not a scale that leaks
    ("lsq_step_clips", "straight-through-gradient", "x.detach()"),
    ("float32_buffer_promotes", "dtype-shape-kept", "(no .float())"),  # it never calls .float()
])
def test_messages_do_not_blame_another_cause(bug, check, wrong_cause):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert wrong_cause not in message, message
