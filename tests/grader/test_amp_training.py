"""amp_training: the reference passes, the starter fails cleanly, each bug fails its own check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gradeutil import DOES_NOTHING, EXERCISES, grade, grade_many

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
    "optimizer_step_no_unscale": ["step-through-scaler"],
    "no_update": ["update-every-iteration", "overflow-skips-step"],
    "zero_grad_between": ["zero-grad"],
    "no_zero_grad": ["zero-grad"],
    "clip_before_unscale": ["clip-after-unscale"],
    "sample_weighted_mean": ["loss-parity-fp16", "loss-parity-bf16"],
    "no_scaler_no_autocast": ["autocast-forward", "grad-scaler", "loss-scaled", "clip-after-unscale"],
}
# Graded with --device cpu: the loop turns AMP off there (checked apart, below).
CUDA_GATED = "cuda_gated"
# Right loops written another way: Lightning's closures (optimizer.step(closure) with bfloat16,
# the closure run before scaler.step with float16) and a mean over len(loader).
ALTERNATIVES = ["ok_closure"]
# Checks a bug leaves alone: proves the failure is for the bug's own reason.
UNAFFECTED = {
    "no_autocast": ["backward-outside-autocast", "grad-scaler", "master-weights-fp32", "zero-grad"],
    "backward_inside_autocast": ["autocast-forward", "grad-scaler", "loss-parity-fp16", "zero-grad"],
    "scaler_per_iteration": ["autocast-forward", "backward-outside-autocast", "loss-scaled", "step-through-scaler"],
    "clip_before_unscale": ["grad-scaler", "loss-parity-fp16", "overflow-skips-step", "autocast-forward"],
    "last_loss": ["grad-scaler", "autocast-forward", "overflow-skips-step", "clip-after-unscale"],
    "no_zero_grad": ["autocast-forward", "grad-scaler", "backward-outside-autocast"],
    "unscaled_backward": ["loss-parity-bf16"],  # every float16 run stops at scaler.step
    "sample_weighted_mean": [c for c in ALL_CHECKS if not c.startswith("loss-parity")],
}
# Messages that say a failure follows from another check, not their own: check id -> text.
CONSEQUENCES = {
    "no_scaler_no_autocast": {"clip-after-unscale": "no GradScaler was created",
                              "loss-parity-bf16": "the forward ran outside autocast"},
    "no_scaler": {"clip-after-unscale": "no GradScaler was created"},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_many([(str(EXERCISES / "amp_training" / "reference.py"),)] +
               [(str(BUGGY / f"{name}.py"),) for name in [*BUGS, *ALTERNATIVES]] +
               [(str(BUGGY / f"{CUDA_GATED}.py"), "--device", "cpu")])


def test_every_check_has_a_bug_that_fails_it():
    assert set(ALL_CHECKS) == {c for checks in BUGS.values() for c in checks}
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS) | {CUDA_GATED} | set(ALTERNATIVES) | {DOES_NOTHING}


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    result = grade(BUGGY / f"{alt}.py")
    assert result.code == 0, [c for c in result.report["checks"] if c["status"] != "pass"]


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


def test_optimizer_step_beside_a_scaler_is_named_for_what_it_is():
    """Without unscale_, scaler.update() raises "No inf checks were recorded": the message says the
    optimizer stepped directly, not that gradients were zeroed."""
    result = grade(BUGGY / "optimizer_step_no_unscale.py")
    message = result.check("step-through-scaler")["message"]
    assert "optimizer.step() was called directly" in message and "scaler.step(optimizer)" in message, message
    assert "zeroed" not in message
    assert result.status("loss-parity-bf16") == "pass"  # bfloat16 runs no scaler: untouched


def test_sample_weighted_mean_is_named():
    message = grade(BUGGY / "sample_weighted_mean.py").check("loss-parity-fp16")["message"]
    assert "weight each iteration's loss by its batch size" in message and "[16, 16, 16, 16, 16, 8]" in message


@pytest.mark.parametrize("bug", sorted(CONSEQUENCES))
def test_downstream_failures_name_their_cause(bug):
    result = grade(BUGGY / f"{bug}.py")
    for check_id, cause in CONSEQUENCES[bug].items():
        message = result.check(check_id)["message"]
        assert result.status(check_id) == "fail" and cause in message and "this follows from the check" in message
        assert "before scaler.unscale_" not in message  # never blamed on the clip order


def test_cuda_gated_loop_is_told_why_on_cpu():
    result = grade(BUGGY / f"{CUDA_GATED}.py", "--device", "cpu")
    note = "your loop turns autocast/the scaler off when the device is not CUDA; this grade ran on CPU"
    for check_id in ("autocast-forward", "grad-scaler"):
        assert result.check(check_id)["message"].startswith(note), result.check(check_id)
    scaled = result.check("loss-scaled")
    assert scaled["status"] == "fail" and "disabled" in scaled["message"] and "this follows from" in scaled["message"]
    clip = result.check("clip-after-unscale")["message"]
    assert "disabled" in clip and "cannot be told" in clip and "total norm" not in clip
    assert "disabled" in result.check("overflow-skips-step")["message"]


def test_cuda_gate_note_printed_once_at_the_top():
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(BUGGY / f"{CUDA_GATED}.py"), "--device", "cpu"],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    lines = out.stdout.splitlines()
    notes = [i for i, line in enumerate(lines) if line.startswith("Note: your loop turns autocast/the scaler off")]
    assert out.returncode == 1 and len(notes) == 1 and notes[0] == 1, out.stdout[:3000]
