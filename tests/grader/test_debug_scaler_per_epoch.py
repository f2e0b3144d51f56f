"""The debug_scaler_per_epoch drill: the broken script shows steps skipped in every epoch, the fixed
one passes, rewrites of the fix pass, and every cosmetic fix fails with a message that names what
it did."""

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

EXERCISE = "debug_scaler_per_epoch"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "no-steps-skipped-again"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "low_init_scale": (("the loss was multiplied by 1024 at the first step where the fixed script's GradScaler "
                        "starts at 65536",), True),
    "scaler_disabled": (("the loss was multiplied by 1 at the first step",), True),
    "no_autocast": (("48 of 48 forward passes ran without autocast(float16)",), True),
    "nan_to_num_grads": (("nan_to_num was called 192 times",), True),
    "lr_raised": (("the learning rate at step 0 was 0.003 where the fixed script uses 0.002",), False),
    "one_epoch": (("8 forward passes where the fixed script runs 48",), True),
}
# near misses that hide nothing but still skip steps: words of the symptom check's message
NEAR_MISSES = {
    "fast_backoff": ("skipped 6 of 48 optimizer steps (1, 1, 1, 1, 1, 1 in the 6 epochs)",),
    "scaler_per_step": ("skipped 48 of 48 optimizer steps (8, 8, 8, 8, 8, 8 in the 6 epochs)",),
}
ALTERNATIVES = ["ok_scaler_passed_in", "ok_state_dict"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_skips_every_epoch():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "skipped 20 of 48 optimizer steps (4, 4, 3, 3, 3, 3 in the 6 epochs)",
        "where the fixed script skips 4 (4, 0, 0, 0, 0, 0)",
        "was 65536, 65536, 65536, 65536, 65536, 65536 (fixed script: 65536, 4096, 4096, 4096, 4096, 4096)"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_still_skips(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["honest-fix"]["status"] == "pass", checks["honest-fix"]
    assert checks[SYMPTOM]["status"] == "fail"
    assert all(w in checks[SYMPTOM]["message"] for w in NEAR_MISSES[name]), checks[SYMPTOM]
    assert checks["matches-fixed-run"]["status"] == "fail"
