"""amp_training: the reference passes, the starter fails cleanly, each bug fails its own check."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import EXERCISES, grade, grade_many

BUGGY = Path(__file__).parent / "buggy" / "amp_training"
ALL_CHECKS = ["returns-losses", "loss-parity-fp16", "loss-parity-bf16", "close-to-fp32", "autocast-forward",
              "backward-outside-autocast", "master-weights-fp32", "grad-scaler", "loss-scaled",
              "step-through-scaler", "update-every-iteration", "zero-grad", "overflow-skips-step",
              "clip-after-unscale"]

# bug file -> the checks it must fail
BUGS = {
    "returns_tensors": ["returns-losses"],
    "last_loss": ["loss-parity-fp16", "loss-parity-bf16"],
    "init_scale_too_high": ["close-to-fp32", "loss-parity-fp16"],
    "no_autocast": ["autocast-forward"],
    "ignores_amp_dtype": ["autocast-forward", "loss-parity-bf16"],
    "backward_inside_autocast": ["backward-outside-autocast"],
    "model_to_amp_dtype": ["master-weights-fp32"],
    "no_scaler": ["grad-scaler", "loss-scaled", "step-through-scaler", "overflow-skips-step"],
    "scaler_per_iteration": ["grad-scaler"],
    "unscaled_backward": ["loss-scaled"],
    "optimizer_step_direct": ["step-through-scaler", "overflow-skips-step"],
    "no_update": ["update-every-iteration", "overflow-skips-step"],
    "zero_grad_between": ["zero-grad"],
    "no_zero_grad": ["zero-grad"],
    "clip_before_unscale": ["clip-after-unscale"],
}
# Checks a bug leaves alone: proves the failure is for the bug's own reason.
UNAFFECTED = {
    "no_autocast": ["backward-outside-autocast", "grad-scaler", "master-weights-fp32", "zero-grad"],
    "backward_inside_autocast": ["autocast-forward", "grad-scaler", "loss-parity-fp16", "zero-grad"],
    "scaler_per_iteration": ["autocast-forward", "backward-outside-autocast", "loss-scaled", "step-through-scaler"],
    "clip_before_unscale": ["grad-scaler", "loss-parity-fp16", "overflow-skips-step", "autocast-forward"],
    "last_loss": ["grad-scaler", "autocast-forward", "overflow-skips-step", "clip-after-unscale"],
    "no_zero_grad": ["autocast-forward", "grad-scaler", "backward-outside-autocast"],
    "unscaled_backward": ["loss-parity-bf16"],  # every float16 run stops at scaler.step
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_many([(str(EXERCISES / "amp_training" / "reference.py"),)] +
               [(str(BUGGY / f"{name}.py"),) for name in BUGS])


def test_every_check_has_a_bug_that_fails_it():
    assert set(ALL_CHECKS) == {c for checks in BUGS.values() for c in checks}


def test_reference_passes():
    result = grade(EXERCISES / "amp_training" / "reference.py")
    assert result.code == 0, result.report
    assert [c["id"] for c in result.report["checks"]] == ALL_CHECKS
    assert {c["status"] for c in result.report["checks"]} == {"pass"}
    assert result.report["device"] == "cpu" and result.report["schema"] == 1


def test_starter_fails_cleanly():
    result = grade(EXERCISES / "amp_training" / "starter.py")
    assert result.code == 1 and result.report["status"] == "fail"
    for check in result.report["checks"]:
        assert check["status"] == "error"
        assert "NotImplementedError: train_with_amp is not written yet" in check["message"]
        assert "line " in check["message"]  # the learner's own frame is shown
        assert "internal grader error" not in check["message"]


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_bug_fails_its_check(bug):
    result = grade(BUGGY / f"{bug}.py")
    assert result.code == 1 and result.report["status"] == "fail"
    for check_id in BUGS[bug]:
        check = result.check(check_id)
        assert check["status"] == "fail", (check_id, check)
        assert check["message"]
    for check_id in UNAFFECTED.get(bug, []):
        assert result.status(check_id) == "pass", (check_id, result.check(check_id))


def test_messages_carry_numbers():
    last = grade(BUGGY / "last_loss.py").check("loss-parity-fp16")["message"]
    assert "last iteration" in last and "mean" in last and any(ch.isdigit() for ch in last)
    clip = grade(BUGGY / "clip_before_unscale.py").check("clip-after-unscale")["message"]
    assert "before scaler.unscale_" in clip and "total norm" in clip
    fp32 = grade(BUGGY / "init_scale_too_high.py").check("close-to-fp32")["message"]
    assert "float32" in fp32 and "%" in fp32
