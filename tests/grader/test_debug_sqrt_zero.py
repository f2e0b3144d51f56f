"""The debug_sqrt_zero drill: the broken script shows its NaN, the fixed one passes, exact rewrites of
the fix pass, and every cosmetic fix or near miss fails with a message that names what it did."""

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

EXERCISE = "debug_sqrt_zero"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "gradients-finite"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "nan_to_num_grads": (("nan_to_num was called 160 times",), True),
    "skip_nonfinite_grads": (("4 optimizer steps ran where the fixed script takes 40",), True),
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.005 where the fixed script uses 0.05",), False),
    "fewer_batches": (("2 forward passes where the fixed script runs 80",), False),
}
# near misses that hide nothing the generic way: (symptom gone?, words of the failing check's message)
NEAR_MISSES = {
    "eps_too_large": (True, ("your loss is 0.04830229 where the exact one is", "an epsilon inside the sqrt")),
    "drop_zero_pairs": (True, ("your loss is 0.05152935", "dropping the pairs at distance 0")),
    "where_trap": (False, ("the loss is nan at step 1",)),
    "clamp_distance": (False, ("the loss is nan at step 1",)),
}
ALTERNATIVES = ["ok_tensor_norm", "ok_double_where", "ok_tiny_eps"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_nan():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, ("the symptom is still there", "the loss is nan at step 1",
                                                         "4 parameter tensors hold NaN"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    symptom_gone, words = NEAR_MISSES[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["honest-fix"]["status"] == "pass"
    assert checks["matches-fixed-run"]["status"] == "fail"
    failing = checks["matches-fixed-run"] if symptom_gone else checks[SYMPTOM]
    assert checks[SYMPTOM]["status"] == ("pass" if symptom_gone else "fail")
    assert all(w in failing["message"] for w in words), failing["message"]
