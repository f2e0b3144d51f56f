"""The debug_clip_before_unscale drill: the broken script shows a loss that barely moves, the fixed
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

EXERCISE = "debug_clip_before_unscale"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "loss-decreases"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

SCALE_NAMED = "the loss was multiplied by 1 at the first step where the fixed script's GradScaler starts at 65536"
CLIP_NAMED = "clip_grad_norm_(..., 0.5) ran 0 times where the fixed script clips 40 times"
# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lr_raised": (("the learning rate at step 0 was 3276.8 where the fixed script uses 0.05",), True),
    "no_clipping": ((CLIP_NAMED,), True),
    "max_norm_times_scale": ((CLIP_NAMED,), True),
    "scaler_disabled": ((SCALE_NAMED,), True),
    "low_init_scale": ((SCALE_NAMED,), True),
    "no_scaler": (("the loss was scaled 0 times and scaler.step ran 0 times",), True),
    "no_autocast": (("40 of 40 forward passes ran without autocast(float16)",), False),
    "fewer_steps": (("5 forward passes where the fixed script runs 40",), False),
}
# near misses that hide nothing but still train wrong: (failing check, words of its message)
NEAR_MISSES = {
    "clip_after_step": ("matches-fixed-run", ("clip_grad_norm_ ran after the optimizer step", "in 40 of 40 iterations")),
    "unscale_by_hand": (SYMPTOM, ("the loss barely moves", "the clipping sees the right gradients")),
}
ALTERNATIVES = ["ok_unscale_then_clip", "ok_optimizer_params"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_stalled_loss():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "the loss barely moves", "(0.8% down)",
        "clip_grad_norm_ measured a total gradient norm of 5.534e+04 at step 0 (max_norm 0.5)"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    check_id, words = NEAR_MISSES[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["honest-fix"]["status"] == "pass", checks["honest-fix"]
    assert checks[check_id]["status"] == "fail"
    assert all(w in checks[check_id]["message"] for w in words), checks[check_id]
    assert checks["matches-fixed-run"]["status"] == "fail"
