"""The debug_scheduler_skipped_step drill: the broken script shows its schedule running ahead of the
optimizer, the fixed one passes, rewrites of the fix pass, and every cosmetic fix fails with a
message that names what it did."""

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

EXERCISE = "debug_scheduler_skipped_step"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "lr-follows-real-steps"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "low_init_scale": (("the loss was multiplied by 1024 at the first step where the fixed script's GradScaler "
                        "starts at 16777216",), True),
    "scaler_disabled": (("the loss was multiplied by 1 at the first step",), True),
    "no_scaler": (("the loss was scaled 0 times and scaler.step ran 0 times",), True),
    "no_autocast": (("40 of 40 forward passes ran without autocast(float16)",), True),
    "nan_to_num_grads": (("nan_to_num was called 160 times",), True),
    "fewer_steps": (("6 forward passes where the fixed script runs 40",), True),
}
# near misses that hide nothing but leave the schedule ahead: words of the symptom check's message
NEAR_MISSES = {
    "loss_finite_check": ("Optimizer step 0 (iteration 6, after 6 iterations whose step the GradScaler skipped) ran at "
                          "lr 0.14 where the schedule gives 0.02",),
    "scheduler_first": ("ran at lr 0.16 where the schedule gives 0.02",),
    "silence_first_step": ("ran at lr 0.12 where the schedule gives 0.02",),
}
ALTERNATIVES = ["ok_scale_not_lower", "ok_wrapped_step"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_schedule_ahead():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "the learning rate runs ahead of the optimizer",
        "Optimizer step 0 (iteration 6, after 6 iterations whose step the GradScaler skipped) ran at lr 0.14 where the "
        "schedule gives 0.02 for step 0", "reached the peak lr 0.2 at optimizer step 3", "skipped 7 of 40 steps"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_keeps_the_schedule_ahead(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["honest-fix"]["status"] == "pass", checks["honest-fix"]
    assert checks[SYMPTOM]["status"] == "fail"
    assert all(w in checks[SYMPTOM]["message"] for w in NEAR_MISSES[name]), checks[SYMPTOM]
    assert checks["matches-fixed-run"]["status"] == "fail"
