"""The debug_next_token_shift drill: the broken script shows its too-good loss, the fixed one passes,
rewrites of the fix pass, every cosmetic fix fails with a message that names what it did, and every
near miss (a shift the wrong way, twice, or with a wrap-around) trains a different model."""

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

EXERCISE = "debug_next_token_shift"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "predicts-next-token"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 50 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.001 where the fixed script uses 0.01",), False),
    "fewer_steps": (("8 forward passes where the fixed script runs 50",), False),
    "skip_low_loss_steps": (("optimizer steps ran where the fixed script takes 50",), False),
}
# near misses: (whether the symptom check passes, words of the failing message)
NEAR_MISSES = {
    "wrong_way_shift": (False, ("the training loss ends at 0.0147, below the 0.990 nats", "the token before that 100%")),
    "shift_twice": (False, ("next-token loss is 3.864 nats where the fixed run's is 1.042",)),
    "label_smoothing": (False, ("next-token loss is 4.068 nats", "the very token it was given 100%")),
    "roll_wraps": (True, ("your loss is 2.8440 where the next-token loss is 2.8495", "torch.roll wraps")),
}
ALTERNATIVES = ["ok_ignore_index", "ok_roll_drop_last", "ok_vocab_dim_second"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_copying():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "the training loss ends at 0.0159, below the 0.990 nats",
        "next-token loss is 8.334 nats where the fixed run's is 1.042", "the very token it was given 100%"))


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


@pytest.mark.parametrize("name, words", [
    ("wrong_way_shift", "the targets are shifted the wrong way"),
    ("shift_twice", "the targets are shifted twice"),
    ("roll_wraps", "torch.roll wraps the first token round to the last position"),
    ("label_smoothing", "the targets are not shifted at all"),
])
def test_the_mismatch_names_the_shift_the_model_learned(name, words):
    """matches-fixed-run says which shift it was from what the trained model guesses, one cause each."""
    _, report = graded(BUGGY / f"{name}.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert words in message, message
    others = {"the targets are shifted the wrong way", "the targets are shifted twice", "torch.roll wraps",
              "the targets are not shifted at all"} - {words}
    assert not any(w in message for w in others if not words.startswith(w)), message
