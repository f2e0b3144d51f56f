"""The debug_teacher_trained drill: the broken script distils from a teacher left in train mode
(noisy soft targets, BatchNorm statistics overwritten), the fixed one passes, rewrites of the fix
pass, every cosmetic fix fails with a message that names what it did, and the near misses (the
teacher's state put back afterwards, BatchNorm alone in eval mode, gradients into the teacher) are
named."""

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

EXERCISE = "debug_teacher_trained"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "teacher-frozen"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]
STARTER_WORDS = ("the symptom is still there", "40 of 40 teacher forward passes ran with net.1 (BatchNorm1d), net.3 (Dropout)",
                 # the figures' last digits follow the CPU's rounding: the words and the leading digits are asked
                 "teacher.net.1.running_mean by up to 1.66", "num_batches_tracked counted 40 more batches",
                 "the teacher's accuracy on its own validation set went from 97.", "% to 90.")

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.01 where the fixed script uses 0.1",), False),
    "fewer_steps": (("10 forward passes where the fixed script runs 40",), False),
    "skip_steps": (("20 optimizer steps ran where the fixed script takes 40",), False),
    "no_teacher": (("the teacher ran 0 forward passes where the fixed script asks it 40 times",), True),
}
# near misses: (whether the symptom check passes, words of the failing message)
NEAR_MISSES = {
    "restore_teacher_state": (False, ("40 of 40 teacher forward passes ran with net.1 (BatchNorm1d), net.3 (Dropout)",)),
    "batchnorm_only_eval": (False, ("40 of 40 teacher forward passes ran with net.3 (Dropout) in train mode",)),
    "eval_without_no_grad": (True, ("6 teacher parameters hold gradients after distillation", "torch.no_grad()")),
}
ALTERNATIVES = ["ok_eval_every_call", "ok_requires_grad_off", "ok_train_false"]


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
