"""grad_accumulation: the reference passes, the starter fails cleanly, and each deliberately
buggy solution fails exactly the checks that describe its bug (graded through the public CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "grad_accumulation"
BUGGY = Path(__file__).resolve().parent / "buggy" / "grad_accumulation"

CHECK_IDS = [
    "optimizer-steps", "returns-step-count", "divisible-matches-big-batch", "trailing-group",
    "short-last-micro-batch", "no-zero-inside-group", "one-micro-batch-at-a-time", "clip-accumulated",
]

# bug file -> the checks it must fail; every other check must pass
BUGS = {
    "no_divide": {"divisible-matches-big-batch", "trailing-group", "short-last-micro-batch"},
    "divide_by_k_unequal": {"short-last-micro-batch"},
    "divide_by_accum_steps": {"trailing-group", "short-last-micro-batch"},
    "drops_trailing_group": {"optimizer-steps", "trailing-group", "short-last-micro-batch", "clip-accumulated"},
    "zero_grad_every_micro_batch": {"divisible-matches-big-batch", "trailing-group", "short-last-micro-batch",
                                    "no-zero-inside-group", "clip-accumulated"},
    "zero_at_group_start": {"no-zero-inside-group"},
    "clips_each_micro_batch": {"clip-accumulated"},
    "no_clip": {"clip-accumulated"},
    "wrong_return_count": {"returns-step-count"},
    "concat_group": {"one-micro-batch-at-a-time"},
    "sum_losses_one_backward": {"one-micro-batch-at-a-time"},
    # timm's loop: right for 6 or 7 micro-batches with accum 3, wrong for 7 with accum 4
    "splits_trailing_group": {"optimizer-steps", "trailing-group", "short-last-micro-batch"},
    # Composer's loop: the whole group runs in optimizer.step(closure), exact, but the closure zeroes
    # when it starts, so the last group's gradients stay in .grad
    "closure_leftover_grads": {"no-zero-inside-group"},
}
# Closure loops that meet the contract (Lightning runs the group's last micro-batch inside
# optimizer.step(closure), Composer the whole group); both call len(loader).
ALTERNATIVES = ["ok_closure_lightning", "ok_closure_composer"]


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(EXERCISE, BUGGY)


def test_reference_passes():
    assert_reference_passes(EXERCISE, CHECK_IDS)


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(EXERCISE, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_closure_loops_that_meet_the_contract_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


def test_gradients_left_after_the_last_step_are_named():
    _, report = grade(BUGGY / "closure_leftover_grads.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "no-zero-inside-group")
    assert "after the function returned, 4 parameters still held gradients" in message, message
    assert "the last group's gradients were never zeroed" in message, message


def test_split_trailing_group_message_shows_the_split():
    _, report = grade(BUGGY / "splits_trailing_group.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "optimizer-steps")
    assert "accum_steps=4" in message and "saw [4, 2, 1]" in message and "split into 2 steps" in message


def test_a_concatenated_group_behind_throw_away_micro_batches_is_seen():
    """One big batch per group through model.forward(x) and torch.autograd.backward, with a throw-away
    forward and zero backward per micro-batch for the recorders: forwards are recorded at the first
    layer (model.forward still calls it) and backward at torch.autograd.backward (Tensor.backward calls it)."""
    code, report = grade(Path(__file__).parent / "hostile" / "accumulation_unseen.py")
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1 and checks["one-micro-batch-at-a-time"]["status"] == "fail"
    assert "saw [8, 8, 8, 8, 32, 8, 2, 10]" in checks["one-micro-batch-at-a-time"]["message"], checks
