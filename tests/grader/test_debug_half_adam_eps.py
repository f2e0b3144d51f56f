"""The debug_half_adam_eps drill: the broken script shows its NaN weights, the fixed one passes,
rewrites of the fix pass, and every cosmetic fix fails with a message that names what it did."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    DOES_NOTHING,
    DRILL_CHECKS,
    assert_cosmetic_fix_named,
    assert_drill_starter_shows_symptom,
    assert_passes,
    assert_reference_passes,
    grade_exercise_files,
    graded,
)

EXERCISE = "debug_half_adam_eps"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "loss-finite"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

FLOAT16_NAMED = "40 of 40 forward passes returned {} where the fixed script's forward passes return float16"
# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lr_lowered": (("the learning rate at step 0 was 0.0003 where the fixed script uses 0.003",), False),
    "nan_to_num_loss": (("nan_to_num was called 40 times",), False),
    "nan_to_num_weights": (("nan_to_num was called 160 times",), True),
    "skip_nonfinite_steps": (("1 optimizer step ran where the fixed script takes 40",), False),
    "fewer_steps": (("1 forward pass where the fixed script runs 40",), False),
    "eps_raised": (("Adam's eps at step 0 was 0.0001 where the grader's optimizer has 1e-08",
                    "the weights it updated are still float16"), True),
    # float32 master copies under an Adam of its own, rounded back into the float16 weights: every step
    # ran, but not on the optimizer passed in (which the grader counts), and it is said so
    "master_copy_own_adam": (("the optimizer passed to your function never stepped, yet the weights changed",
                              "the weights end in float16 where the fixed script's are float32"), True),
    # the same in step hooks that raise eps for the update and put it back after: read as the update used it
    "eps_raised_by_hooks": (("Adam's eps at step 0 was 0.0001 where the grader's optimizer has 1e-08",
                             "the weights it updated are still float16"), True),
    "no_mixed_precision": ((FLOAT16_NAMED.format("float32"),), True),
    "bfloat16_autocast": ((FLOAT16_NAMED.format("bfloat16"),), True),
}
# near misses that hide nothing but train a different model: (words of the matches-fixed-run message)
NEAR_MISSES = {
    "cast_back_each_step": ("net.0.weight, net.0.bias, net.2.weight, net.2.bias are float16",
                            "can only move in steps of 2.4e-04", "A float32 copy of the weights has to live"),
}
ALTERNATIVES = ["ok_loss_outside_autocast", "ok_half_weights_in_graph", "ok_with_grad_scaler"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_nan():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "the loss is nan at step 1",
        "right after optimizer step 0, 3 of 4 parameter tensors held inf or NaN",
        "although every gradient that step used was finite"))


def test_starter_gets_no_rounding_advice():
    """The starter's failure is its NaN; the advice about rounded float16 updates is for finite runs."""
    _, report = graded(FOLDER / "starter.py")
    matches = next(c for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert "the loss at step 1 is nan" in matches["message"] and "rounded" not in matches["message"], matches


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_rounded_float16_weights_are_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "pass" and checks["honest-fix"]["status"] == "pass"
    assert checks["matches-fixed-run"]["status"] == "fail"
    assert all(w in checks["matches-fixed-run"]["message"] for w in NEAR_MISSES[name]), checks["matches-fixed-run"]
