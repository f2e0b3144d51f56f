"""The debug_zero_grad_missing drill: the broken script shows gradients adding up across steps, the
fixed one passes, rewrites of the fix pass, every cosmetic fix is named, and the near misses (zero_grad
in the wrong place, or clearing more than the gradients) fail with what they did."""

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

EXERCISE = "debug_zero_grad_missing"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "fresh-gradient-each-step"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it); none
# hides it: the symptom check looks at the gradient each step uses, not at the loss
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "lower_lr": (("the learning rate at step 0 was 0.005 where the fixed script uses 0.05",), False),
    "momentum_zero": (("the optimizer's momentum at step 0 was 0 where the fixed script uses 0.9",), False),
    "nan_to_num_grads": (("nan_to_num was called 160 times",), False),
    "skip_big_steps": (("14 optimizer steps ran where the fixed script takes 40",), False),
    "fewer_steps": (("5 forward passes where the fixed script runs 40",), False),
    "clip_grads": (("clip_grad_norm_ ran 40 times where the fixed script never clips",), False),
}
# near misses: (failing checks, words of the first failing check's message)
NEAR_MISSES = {
    "zero_grad_after_backward": ({SYMPTOM, "matches-fixed-run"}, (
        "at step 0 the optimizer stepped with a gradient of norm 0 where the gradient of that step's batch has norm",
        "cleared after backward and before the step used it (40 of 40 steps)")),
    "zero_grad_every_other_step": ({SYMPTOM, "matches-fixed-run"}, ("the gradients add up across steps",
                                                                    "happens at 20 of 40 steps")),
    "zero_last_layer_only": ({SYMPTOM, "matches-fixed-run"}, ("the gradients add up across steps",
                                                              "happens at 39 of 40 steps")),
    "clear_optimizer_state": ({"matches-fixed-run"}, ("before 39 of the 40 steps the optimizer's state (its momentum "
                                                      "buffers) was empty",)),
}
ALTERNATIVES = ["ok_zero_after_step", "ok_grad_none", "ok_model_zero_grad_zeros"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_gradients_adding_up():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there: the gradients add up across steps",
        "At step 39 the optimizer stepped with a gradient of norm 335.906 where the gradient of that step's batch "
        "has norm 148.597", "It starts at step 1 and happens at 39 of 40 steps", "step 39: 1974.11"))


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    failing, words = NEAR_MISSES[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    seen = statuses(report)
    assert {cid for cid, status in seen.items() if status != "pass"} == failing, report
    assert seen["honest-fix"] == "pass"
    first = next(c for c in report["checks"] if c["status"] != "pass")
    assert all(w in first["message"] for w in words), first["message"]
