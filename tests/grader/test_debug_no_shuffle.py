"""The debug_no_shuffle drill: the broken script shows its single-class batches, the fixed one
passes, rewrites of the fix pass, every cosmetic fix fails with a message that names what it did,
and every near-miss shuffle is named for how it differs."""

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

EXERCISE = "debug_no_shuffle"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "batches-mix-classes"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 48 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.01 where the fixed script uses 0.1",), False),
    "fewer_epochs": (("24 forward passes where the fixed script runs 48",), False),
    "skip_loss_spikes": (("optimizer steps ran where the fixed script takes 48",), False),
    "full_batch": (("2 forward passes where the fixed script runs 48", "batch 0 held 192 samples"), True),
}
# near misses that mix the batches but train another model: (words of the matches-fixed-run message)
NEAR_MISSES = {
    "randperm_per_epoch": ("your order is torch.randperm(n, generator=generator) once per epoch",),
    "shuffle_once": ("all 2 epochs visited the samples in the same order",),
    "interleave_classes": ("all 2 epochs visited the samples in the same order",),
    "shuffle_no_generator": ("another order than the fixed script's", "global random state"),
    "with_replacement": ("of the 192 training samples were never drawn", "sampling with replacement"),
}
# near misses that still feed single-class batches: (words of the symptom message)
STILL_SORTED = {
    "shuffle_batch_order": ("48 of your 48 batches held a single class",),
}
ALTERNATIVES = ["ok_loader_per_epoch", "ok_random_sampler", "ok_batch_sampler"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == (set(COSMETIC) | set(NEAR_MISSES) | set(STILL_SORTED)
                                                    | set(ALTERNATIVES)) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_single_class_batches():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "48 of your 48 batches held a single class",
        "24 of the 24 batches of epoch 0: class 0 x6, class 1 x6, class 2 x6, class 3 x6",
        "The loss saws", "validation accuracy per class is class 0 0%"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_shuffle_is_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "pass" and checks["honest-fix"]["status"] == "pass"
    assert checks["matches-fixed-run"]["status"] == "fail"
    assert all(w in checks["matches-fixed-run"]["message"] for w in NEAR_MISSES[name]), checks["matches-fixed-run"]


@pytest.mark.parametrize("name", sorted(STILL_SORTED))
def test_shuffled_batch_order_still_shows_symptom(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "fail" and checks["honest-fix"]["status"] == "pass"
    assert all(w in checks[SYMPTOM]["message"] for w in STILL_SORTED[name]), checks[SYMPTOM]
