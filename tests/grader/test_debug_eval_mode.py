"""The debug_eval_mode drill: the broken script validates in train mode (dropout on, BatchNorm's
running statistics pulled towards the validation data), the fixed one passes, rewrites of the fix
pass, every cosmetic fix fails with a message that names what it did, and the near misses (eval
mode never undone, BatchNorm alone in eval mode, inference_mode instead of eval) are named."""

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

EXERCISE = "debug_eval_mode"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "validates-in-eval-mode"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]
STARTER_WORDS = ("the symptom is still there", "10 of 10 validation forward passes ran with net.1 (BatchNorm1d), net.3 (Dropout)",
                 "running statistics moved by up to 0.5044 during validation",
                 "yours 0.5298, 0.3427, 0.3178, 0.3225, 0.3047; the fixed run's 0.3750, 0.2580")

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.005 where the fixed script uses 0.05",), False),
    "fewer_epochs": (("10 forward passes where the fixed script runs 50", "8 optimizer steps ran where the fixed script takes 40"), False),
    "skip_validation": (("40 forward passes where the fixed script runs 50",), False),
    "dropout_off": (("dropout's rate was 0 in 40 training forward passes where the fixed script trains with 0.5",), False),
}
# near misses: (whether the symptom check passes, words of the failing message)
NEAR_MISSES = {
    "eval_never_train_again": (True, ("32 of 40 training forward passes (the first at pass 8) ran with dropout or "
                                      "BatchNorm in eval mode", "call model.train() again")),
    "batchnorm_only_eval": (False, ("10 of 10 validation forward passes ran with net.3 (Dropout) in train mode",)),
    "inference_mode_only": (False, ("net.1 (BatchNorm1d), net.3 (Dropout) in train mode", "moved by up to 0.5044")),
}
# ok_eval_in_loop leaves evaluate() as it was and switches the mode around its call: tests/test_drills.py runs
# each of these as the script the learner runs, whose log must then be the fixed script's.
ALTERNATIVES = ["ok_restore_mode", "ok_train_each_epoch", "ok_train_false", "ok_eval_in_loop"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_symptom():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, STARTER_WORDS)


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
    assert checks["honest-fix"]["status"] == "pass", checks["honest-fix"]
    assert checks[SYMPTOM]["status"] == ("pass" if symptom_gone else "fail"), checks[SYMPTOM]
    assert checks["matches-fixed-run"]["status"] == "fail"
    failing = checks["matches-fixed-run"] if symptom_gone else checks[SYMPTOM]
    assert all(w in failing["message"] for w in words), failing["message"]
