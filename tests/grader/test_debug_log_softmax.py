"""The debug_log_softmax drill: the broken script shows its NaN, the fixed one passes, rewrites of
the fix pass, and every cosmetic fix fails with a message that names what it did."""

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

EXERCISE = "debug_log_softmax"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "loss-finite"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "nan_to_num_loss": (("nan_to_num was called 40 times",), False),
    "nan_to_num_grads": (("nan_to_num was called",), True),
    "skip_nonfinite_steps": (("2 optimizer steps ran where the fixed script takes 40",), False),
    "lr_zero": (("the learning rate was 0 at all 40 steps",), True),
    "lower_lr": (("the learning rate at step 0 was 0.003 where the fixed script uses 0.03",), False),
    "fewer_steps": (("1 forward pass where the fixed script runs 40",), True),
}
# near misses that hide nothing the generic way but train a different model: (words of the message)
NEAR_MISSES = {
    "eps_in_log": ("your loss is 15.42 where the exact cross-entropy is 26.24", "an epsilon inside the log"),
    "clamped_probs": ("your loss is 19.48 where the exact cross-entropy is 26.24",),
}
ALTERNATIVES = ["ok_log_softmax_nll", "ok_logsumexp"]
# the same formula in float64: finite here, and within the tolerance of the fixed run, but the
# underflow is only moved further out; honest-fix names it (seen at the dispatcher)
SAME_TRAINING = {
    "float64_probs": ("640 operations computed in float64 where the fixed script computes none",
                      "larger logits bring the NaN back"),
}
# the bug left in place and the model handed over tamed (the defining module's logit scale, or its
# class's forward): the fixed run, built first from the fixed script loaded anew, does not follow
TAMPERED = {
    "patches_fixed_module": "the loss at step 0 is 1.67212 where the fixed script's is 26.2357",
    "patches_model_class": "the loss at step 0 is 1.67212 where the fixed script's is 26.2357",
}


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == (set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | set(SAME_TRAINING)
                                                   | set(TAMPERED) | {DOES_NOTHING})


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_nan():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, ("the symptom is still there", "the loss is nan at step 2", "5 parameter tensors hold NaN"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_capped_loss_is_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "pass" and checks["honest-fix"]["status"] == "pass"
    assert checks["matches-fixed-run"]["status"] == "fail"
    assert all(w in checks["matches-fixed-run"]["message"] for w in NEAR_MISSES[name]), checks["matches-fixed-run"]


@pytest.mark.parametrize("name", sorted(SAME_TRAINING))
def test_float64_is_named_though_the_training_matches(name):
    code, report = graded(BUGGY / f"{name}.py")
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1 and checks[SYMPTOM]["status"] == "pass"
    assert checks["honest-fix"]["status"] == "fail"
    assert all(w in checks["honest-fix"]["message"] for w in SAME_TRAINING[name]), checks["honest-fix"]


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tamed_model_does_not_tame_the_fixed_run(name):
    code, report = graded(BUGGY / f"{name}.py")
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1 and checks["matches-fixed-run"]["status"] == "fail"
    assert TAMPERED[name] in checks["matches-fixed-run"]["message"], checks["matches-fixed-run"]
