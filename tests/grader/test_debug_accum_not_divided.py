"""The debug_accum_not_divided drill: the broken script shows the loss exploding, the fixed one
passes, rewrites of the fix pass, every cosmetic fix is named, and the near misses (a wrong scaling,
gradients zeroed inside the group) fail with the factor they are off by."""

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
    statuses,
)

EXERCISE = "debug_accum_not_divided"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "loss-does-not-explode"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 20 steps",), True),
    "lower_lr": (("the learning rate at step 0 was 0.01 where the fixed script uses 0.1",), True),
    "nan_to_num_grads": (("nan_to_num was called 80 times",), False),
    "skip_big_steps": (("2 optimizer steps ran where the fixed script takes 20",), False),
    "fewer_steps": (("16 forward passes where the fixed script runs 160",), True),
    "step_every_micro_batch": (("160 optimizer steps ran where the fixed script takes 20",
                                "drops the accumulation"), True),
    "clip_grads": (("clip_grad_norm_ ran 20 times where the fixed script never clips",), True),
}
# cosmetic fixes that happen to train the same model: honest-fix names them, the training matches
SAME_TRAINING = {
    "lr_over_accum_steps": ("the learning rate at step 0 was 0.0125 where the fixed script uses 0.1",),
    # the same, hidden in step hooks that divide the lr for the update and put it back after: the lr
    # is read as the update used it
    "lr_divided_by_hooks": ("the learning rate at step 0 was 0.0125 where the fixed script uses 0.1",),
    "concat_micro_batches": ("20 forward passes ran on 128 samples where the fixed script runs micro-batches of [16]",
                             "joining the micro-batches"),
}
# near misses that hide nothing but train a different model: (failing checks, words of matches-fixed-run)
NEAR_MISSES = {
    "divide_by_micro_batch_size": ({"matches-fixed-run"}, ("your gradient's norm is 0.5 times the fixed script's",)),
    "divide_by_micro_step": ({"matches-fixed-run"}, ("your gradient's norm is 2.74 times the fixed script's",)),
    "zero_grad_every_micro_batch": ({"matches-fixed-run"}, ("zero_grad ran 181 times where the fixed script runs it 21",
                                                            "keeps only the last micro-batch's gradient")),
    "divide_logged_loss_only": ({SYMPTOM, "matches-fixed-run"}, ("your gradient's norm is 8 times the fixed script's",)),
}
ALTERNATIVES = ["ok_divide_grads", "ok_sample_weights"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    listed = set(COSMETIC) | set(SAME_TRAINING) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}
    assert {p.stem for p in BUGGY.glob("*.py")} == listed


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_explosion():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there: the loss explodes, 7.4397 at step 2 against 1.87274 at step 0",
        "step 19: 3.01167e+28", "the first step's gradient had norm 20.3455", "is 2.54319"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(SAME_TRAINING))
def test_cosmetic_fix_with_the_same_training_is_still_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    seen = statuses(report)
    assert seen == {SYMPTOM: "pass", "honest-fix": "fail", "matches-fixed-run": "pass"}, report
    honest = next(c for c in report["checks"] if c["id"] == "honest-fix")
    assert all(w in honest["message"] for w in SAME_TRAINING[name]), honest["message"]


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    failing, words = NEAR_MISSES[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    seen = statuses(report)
    assert {cid for cid, status in seen.items() if status != "pass"} == failing, report
    assert seen["honest-fix"] == "pass"
    matches = next(c for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert all(w in matches["message"] for w in words), matches["message"]
