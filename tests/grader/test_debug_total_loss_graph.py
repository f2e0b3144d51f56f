"""The debug_total_loss_graph drill: the broken script shows autograd holding more saved activations
every step, the fixed one passes, rewrites of the fix pass, every cosmetic fix is named, and the
near misses (gc.collect, del, dropout left off) fail with what they did."""

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

EXERCISE = "debug_total_loss_graph"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "memory-stays-flat"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# cosmetic fixes that change the training: (words of honest-fix, whether the symptom is hidden)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 40 steps",), False),
    "fewer_steps": (("2 forward passes where the fixed script runs 80",
                     "the held-out batch was scored 1 time where the fixed script scores it 40 times"), True),
    "sparse_validation": (("the held-out batch was scored 4 times where the fixed script scores it 40 times",), False),
}
# a cosmetic fix that leaves the training and the memory like the fixed run's (the held-out pass
# never touches the weights): honest-fix names it and fails the grade; (words, whether the symptom is hidden)
SAME_TRAINING = {
    "no_validation": (("the held-out batch was scored 0 times where the fixed script scores it 40 times",), True),
}
# near misses: (failing checks, words of the first failing check's message)
NEAR_MISSES = {
    "gc_collect": ({SYMPTOM, "matches-fixed-run"}, ("the symptom is still there: memory grows every step",)),
    "del_val_loss": ({SYMPTOM, "matches-fixed-run"}, ("the symptom is still there: memory grows every step",)),
    "no_grad_without_train": ({"matches-fixed-run"}, ("39 of the training forward passes ran in eval mode",)),
    # The leak behind saved-tensor hooks of the learner's own (only the innermost pair runs): the graphs
    # are counted by their lifetime, which no hook changes.
    "hidden_by_save_on_cpu": ({SYMPTOM, "matches-fixed-run"}, (
        "the symptom is still there: memory grows every step. When step 39 began, autograd still held the graphs "
        "of 39 earlier forward passes", "save_on_cpu")),
    "hidden_by_identity_hooks": ({SYMPTOM, "matches-fixed-run"}, ("still held the graphs of 39 earlier forward passes",)),
    "hidden_by_checkpointing": ({SYMPTOM, "matches-fixed-run"}, ("the symptom is still there: memory grows every step",)),
}
ALTERNATIVES = ["ok_item_only", "ok_detach"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    listed = set(COSMETIC) | set(SAME_TRAINING) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}
    assert {p.stem for p in BUGGY.glob("*.py")} == listed


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_growth():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there: memory grows every step",
        "When step 39 began, autograd still held the saved activations of 39 earlier forward passes: 158 tensors, "
        "9.92 MiB", "about 0.25 MiB more each step", "The fixed script holds at most 0.00 MiB"))
    code, report = graded(FOLDER / "starter.py")
    matches = next(c for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert matches["status"] == "fail" and "the losses and weights match the fixed script's, but its memory does not" \
        in matches["message"], matches


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(SAME_TRAINING))
def test_dropping_the_held_out_loss_is_named(name):
    words, hidden = SAME_TRAINING[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    seen = statuses(report)
    assert seen == {SYMPTOM: "pass" if hidden else "fail", "honest-fix": "fail", "matches-fixed-run": "pass"}, report
    honest = next(c for c in report["checks"] if c["id"] == "honest-fix")
    assert all(w in honest["message"] for w in words), honest["message"]


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    failing, words = NEAR_MISSES[name]
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    seen = statuses(report)
    assert {cid for cid, status in seen.items() if status != "pass"} == failing, report
    first = next(c for c in report["checks"] if c["status"] != "pass")
    assert all(w in first["message"] for w in words), first["message"]
