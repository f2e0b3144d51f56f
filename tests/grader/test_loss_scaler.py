"""The loss_scaler exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it), and correct
solutions built on torch's own GradScaler, or on float32 tensor state, pass every check."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_errors_name_inputs,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade

EXERCISE = "loss_scaler"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["scale-trajectory", "skip-on-overflow", "return-value", "clean-step-update", "missing-grads",
             "growth-only-if-finite", "scale-loss"]

# bug file -> the checks it must fail; every other check must pass.
BUGS = {
    "no_backoff": {"scale-trajectory"},
    "growth_never_resets_count": {"scale-trajectory"},
    "steps_on_inf": {"skip-on-overflow"},
    "forgets_nan": {"scale-trajectory", "skip-on-overflow", "return-value"},
    "no_unscale": {"clean-step-update"},
    "wrong_return": {"return-value"},
    "crashes_on_missing_grad": {"missing-grads"},
    "grows_to_inf": {"growth-only-if-finite"},
    "backoff_ignored": {"scale-trajectory"},
    "scale_loss_shape_one": {"scale-loss"},
}
# Correct solutions written another way: every check must pass (the oracle passes its own exam).
ALTERNATIVES = ["ok_gradscaler", "ok_float32_state"]
# Solutions that raise on valid inputs: the error names those inputs. file -> {check id: message start}
RAISES = {
    "asserts_backoff_inverse": {
        "scale-trajectory": "with DynamicLossScaler(init_scale=1024, growth_factor=2, backoff_factor=0.25, "
                            "growth_interval=2): AssertionError"},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(FOLDER, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, [*ALTERNATIVES, *RAISES])


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


def test_nan_bug_message_names_the_nan():
    _, report = grade(BUGGY / "forgets_nan.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "skip-on-overflow")
    assert "nan" in message and "isfinite" in message


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


def test_backoff_bug_message_names_the_backoff_config():
    _, report = grade(BUGGY / "backoff_ignored.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "scale-trajectory")
    assert "backoff_factor=0.25" in message and "growth_factor=2," in message and "became 512, yours 1024" in message


def test_scale_loss_shape_message():
    _, report = grade(BUGGY / "scale_loss_shape_one.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "scale-loss")
    assert "shape [1]" in message and "0-dim" in message


def test_reference_matches_gradscaler_at_the_float32_top():
    """From 2**126 with growth 2, GradScaler's float32 scale stops at 2**127; so does the reference."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("loss_scaler_reference", FOLDER / "reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    mine = reference.DynamicLossScaler(init_scale=2.0**126, growth_interval=1)
    torch_scaler = torch.amp.GradScaler("cpu", init_scale=2.0**126, growth_interval=1)
    p = torch.ones(2, requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.1)
    mine_scales, torch_scales = [], []
    for scaler, out in ((mine, mine_scales), (torch_scaler, torch_scales)):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            loss = (p * 0.0).sum()
            if scaler is mine:
                scaler.scale_loss(loss).backward()
                assert scaler.step(optimizer) is True
                out.append(scaler.scale)
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                out.append(scaler.get_scale())
    assert mine_scales == torch_scales == [2.0**127] * 3


@pytest.mark.parametrize("bug", sorted(RAISES))
def test_errors_name_the_inputs(bug):
    assert_errors_name_inputs(BUGGY / f"{bug}.py", RAISES[bug])
