"""The activation_checkpointing exercise: the reference passes and plots kept memory per segment
count, the starter fails cleanly with the learner's line, each buggy solution fails the check that
names its bug (and passes the unrelated ones), and a solution written another way passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade,
    grade_exercise_files,
)

from quizapp.grading import runner

EXERCISE = "activation_checkpointing"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["output-and-gradients", "segment-boundaries", "use-reentrant-false", "memory-saved", "recompute-once",
             "validation"]

# bug file -> the checks it must fail; every other check must pass, except those in MAY_ALSO.
BUGS = {
    # With an input that does not require grad, nothing inside gets a gradient, and no backward
    # runs through the regions to recompute them.
    "reentrant": {"use-reentrant-false", "output-and-gradients", "recompute-once"},
    "no_rng_preserve": {"output-and-gradients"},
    "remainder_last": {"segment-boundaries"},
    "per_block": {"segment-boundaries", "memory-saved"},
    "no_checkpoint": {"segment-boundaries", "use-reentrant-false", "memory-saved", "recompute-once"},
    "uses_checkpoint_sequential": {"segment-boundaries", "memory-saved", "recompute-once"},
    "no_validation": {"validation"},
}
ALTERNATIVES = ["ok_tensor_split"]


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_reference_plots_kept_memory_per_segment_count():
    # The JSON report leaves check data out: the runner's report carries it (what the TUI plots).
    report = runner.grade(FOLDER / "reference.py", FOLDER, exercise_id=EXERCISE, device="cpu")
    curves = next(c.data["curves"] for c in report.checks if c.id == "memory-saved")
    assert curves["x"] == "segments"
    kept, plain = curves["series"]["reference"], curves["series"]["no checkpointing"]
    # One region input kept per segment: rising with the segment count, all far below no checkpointing.
    assert len(kept) == 6 and kept == sorted(kept) and kept[-1] < plain[0] / 2
    assert curves["series"]["yours"] == kept


def test_starter_fails_with_the_learners_line():
    report = assert_starter_fails_cleanly(FOLDER, CHECK_IDS)
    first = report["checks"][0]["message"]
    assert "checkpointed_forward is not written yet" in first
    assert "in checkpointed_forward: raise NotImplementedError" in first


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug, check, words", [
    ("reentrant", "output-and-gradients", ["use_reentrant=False", "no gradient"]),
    ("no_rng_preserve", "output-and-gradients", ["preserve_rng_state"]),
    ("remainder_last", "segment-boundaries", ["blocks 0-2 + blocks 3-4 + blocks 5-6", "blocks 0-1 + blocks 2-3 + blocks 4-6"]),
    ("per_block", "memory-saved", ["KiB", "plain forward"]),
    ("uses_checkpoint_sequential", "segment-boundaries", ["outside any checkpoint region"]),
    ("uses_checkpoint_sequential", "recompute-once", ["never recomputed"]),
    ("no_checkpoint", "use-reentrant-false", ["no torch.utils.checkpoint.checkpoint call"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message
