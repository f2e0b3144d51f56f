"""lora: the reference passes, the starter fails cleanly, and each deliberately buggy solution
fails the checks that describe its bug (graded through the public CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "lora"
BUGGY = Path(__file__).resolve().parent / "buggy" / "lora"

CHECK_IDS = [
    "lora-shapes", "lora-init", "lora-scaling", "lora-forward", "lora-dropout", "lora-merge",
    "lora-gradients", "lora-bf16", "add-lora-targets", "add-lora-freezes", "add-lora-twice",
]

# bug file -> (checks that must have status "fail", other checks allowed not to pass); the rest must pass
BUGS = {
    "substring_match": ({"add-lora-targets", "add-lora-freezes", "add-lora-twice"}, set()),
    "b_random_init": ({"lora-init"}, set()),
    "a_zero_init": ({"lora-init"}, set()),
    "scaling_alpha": ({"lora-scaling", "lora-forward", "lora-gradients"}, set()),
    "scaling_ignored": ({"lora-forward", "lora-merge", "lora-gradients"}, set()),
    "dropout_on_base": ({"lora-dropout"}, set()),
    "dropout_always_on": ({"lora-dropout"}, set()),
    "merge_mutates": ({"lora-merge"}, set()),
    "merge_unscaled": ({"lora-merge"}, set()),
    "no_freeze": ({"add-lora-freezes", "add-lora-twice"}, set()),
    "base_trainable": ({"lora-shapes", "lora-gradients"}, set()),
    "double_wrap": ({"add-lora-twice"}, set()),
    "refreeze_lora": ({"add-lora-twice"}, set()),
    "rewraps_existing": ({"add-lora-twice"}, set()),
    "fp32_adapters": ({"lora-bf16"}, set()),
    # wrong shapes make the formulas themselves fail to run: those checks report the solution's error
    "a_transposed": ({"lora-shapes"}, {"lora-forward", "lora-merge", "lora-gradients"}),
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(EXERCISE, BUGGY)


def test_reference_passes():
    assert_reference_passes(EXERCISE, CHECK_IDS)


def test_starter_fails_cleanly():
    report = assert_starter_fails_cleanly(EXERCISE, CHECK_IDS)
    for check in report["checks"]:
        assert "NotImplementedError" in check["message"], check


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, {bug: must for bug, (must, _) in BUGS.items()}, CHECK_IDS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    must, allowed = BUGS[bug]
    assert_bug_fails(BUGGY / f"{bug}.py", must, may_also_not_pass=allowed, numbers=False)


def message(bug: str, check_id: str) -> str:
    _, report = grade(BUGGY / f"{bug}.py")
    return next(c["message"] for c in report["checks"] if c["id"] == check_id)


def test_second_call_must_keep_trained_adapters():
    text = message("rewraps_existing", "add-lora-twice")
    assert "changed the trained lora_A/lora_B of 5 of 5 adapters" in text and "and 1 more" in text


def test_messages_read_well():
    assert "the base layer's weight and bias still require gradients; freeze them" in message("base_trainable",
                                                                                                "lora-shapes")
    merge = message("merge_mutates", "lora-merge")
    assert "changed the LoRALinear: base.weight (moved by up to " in merge and "; base.weight moved" not in merge
    twice = message("no_freeze", "add-lora-twice")
    assert "extra blocks.0.attn.k_proj.bias" in twice and "and 23 more" in twice  # a cut list says it was cut
