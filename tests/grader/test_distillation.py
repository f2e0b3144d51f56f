"""distillation: the reference passes, the starter fails cleanly, each bug fails its own check,
and correct alternatives (inference_mode teacher, probability target) pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import DOES_NOTHING, EXERCISES, assert_errors_name_inputs, grade, grade_many

BUGGY = Path(__file__).parent / "buggy" / "distillation"
REFERENCE = EXERCISES / "distillation" / "reference.py"
ALL_CHECKS = ["loss-value", "loss-gradient", "returns-scalar-float32", "no-grad-to-teacher", "large-logits-stable",
              "t-squared-scaling", "teacher-eval-mode", "teacher-unchanged", "teacher-no-graph",
              "epoch-trains-student", "epoch-mean-loss"]
LOSS_CHECKS = ALL_CHECKS[:6]
EPOCH_CHECKS = ALL_CHECKS[6:]

# bug file -> the checks it must fail
BUGS = {
    "no_t_squared": ["loss-value", "loss-gradient", "t-squared-scaling", "epoch-trains-student"],
    "kl_swapped": ["loss-gradient", "epoch-trains-student"],
    "reduction_mean": ["loss-value", "loss-gradient", "large-logits-stable", "epoch-trains-student"],
    "log_of_softmax": ["large-logits-stable"],
    "alpha_swapped": ["loss-value", "loss-gradient", "epoch-trains-student"],
    "float64_loss": ["returns-scalar-float32"],
    "teacher_not_detached": ["no-grad-to-teacher"],
    "teacher_train_mode": ["teacher-eval-mode", "teacher-unchanged", "epoch-trains-student"],
    "teacher_with_grad": ["teacher-no-graph"],
    "epoch_ignores_kwargs": ["epoch-trains-student", "epoch-mean-loss"],
    "no_zero_grad": ["epoch-trains-student"],
    "returns_last_loss": ["epoch-mean-loss"],
    "returns_tensor_mean": ["epoch-mean-loss"],
}
# Checks a bug leaves alone: proves the failure is for the bug's own reason.
UNAFFECTED = {
    "no_t_squared": ["no-grad-to-teacher", "returns-scalar-float32"] + EPOCH_CHECKS[:3],
    "kl_swapped": ["no-grad-to-teacher", "t-squared-scaling"] + EPOCH_CHECKS[:3],
    "alpha_swapped": ["no-grad-to-teacher"] + EPOCH_CHECKS[:3],
    "log_of_softmax": [c for c in ALL_CHECKS if c != "large-logits-stable"],
    "float64_loss": [c for c in ALL_CHECKS if c != "returns-scalar-float32"],
    "teacher_not_detached": [c for c in ALL_CHECKS if c != "no-grad-to-teacher"],
    "teacher_train_mode": LOSS_CHECKS + ["teacher-no-graph"],
    "teacher_with_grad": [c for c in ALL_CHECKS if c != "teacher-no-graph"],
    "epoch_ignores_kwargs": LOSS_CHECKS + EPOCH_CHECKS[:3],
    "no_zero_grad": LOSS_CHECKS + EPOCH_CHECKS[:3],
    "returns_last_loss": [c for c in ALL_CHECKS if c != "epoch-mean-loss"],
    "returns_tensor_mean": [c for c in ALL_CHECKS if c != "epoch-mean-loss"],
}
# Correct solutions written another way: every check must pass.
# ok_closure: the step's forward and backward in optimizer.step(closure), the mean over len(loader)
ALTERNATIVES = ["ok_inference_mode", "ok_softmax_target", "ok_closure"]
# Solutions that raise on valid inputs: the error names those inputs. file -> {check id: message start}
RAISES = {
    "asserts_temperature": {check: "with a batch of 8, temperature=0.5, alpha=0.7: AssertionError"
                            for check in ("loss-value", "loss-gradient", "no-grad-to-teacher")},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_many([(str(REFERENCE),)] + [(str(BUGGY / f"{name}.py"),) for name in [*BUGS, *ALTERNATIVES, *RAISES]])


def test_every_check_has_a_bug_that_fails_it():
    assert set(ALL_CHECKS) == {c for checks in BUGS.values() for c in checks}
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS) | set(ALTERNATIVES) | set(RAISES) | {DOES_NOTHING}


def test_reference_passes():
    result = grade(REFERENCE)
    assert result.code == 0, result.report
    assert [c["id"] for c in result.report["checks"]] == ALL_CHECKS
    assert {c["status"] for c in result.report["checks"]} == {"pass"}


def test_starter_fails_cleanly():
    result = grade(EXERCISES / "distillation" / "starter.py")
    assert result.code == 1 and result.report["status"] == "fail"
    assert [c["id"] for c in result.report["checks"]] == ALL_CHECKS
    for check in result.report["checks"]:
        assert check["status"] == "error", check
        name = "distillation_loss" if check["id"] in LOSS_CHECKS else "distill_epoch"
        assert f"{name} is not written yet" in check["message"] or "same error as" in check["message"]
        assert "internal grader error" not in check["message"]


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_bug_fails_its_check(bug):
    result = grade(BUGGY / f"{bug}.py")
    assert result.code == 1 and result.report["status"] == "fail"
    for check_id in BUGS[bug]:
        check = result.check(check_id)
        assert check["status"] == "fail", (check_id, check)
        assert check["message"] and any(ch.isdigit() for ch in check["message"]), check
    for check_id in UNAFFECTED.get(bug, []):
        assert result.status(check_id) == "pass", (check_id, result.check(check_id))


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    result = grade(BUGGY / f"{alt}.py")
    assert result.code == 0, [c for c in result.report["checks"] if c["status"] != "pass"]


def test_messages_name_the_mistake():
    assert "swapped" in grade(BUGGY / "kl_swapped.py").check("loss-gradient")["message"]
    assert "T\u00b2 factor is missing" in grade(BUGGY / "no_t_squared.py").check("loss-value")["message"]
    ratio = grade(BUGGY / "no_t_squared.py").check("t-squared-scaling")["message"]
    assert "reference:" in ratio and " x " in ratio
    assert "batchmean" in grade(BUGGY / "reduction_mean.py").check("loss-value")["message"]
    assert "log_softmax" in grade(BUGGY / "log_of_softmax.py").check("large-logits-stable")["message"]
    assert "last batch" in grade(BUGGY / "returns_last_loss.py").check("epoch-mean-loss")["message"]
    assert "running_mean" in grade(BUGGY / "teacher_train_mode.py").check("teacher-unchanged")["message"]
    assert "no_grad" in grade(BUGGY / "teacher_with_grad.py").check("teacher-no-graph")["message"]


@pytest.mark.parametrize("bug", sorted(RAISES))
def test_errors_name_the_inputs(bug):
    assert_errors_name_inputs(BUGGY / f"{bug}.py", RAISES[bug])
    result = grade(BUGGY / f"{bug}.py")
    assert all(c["status"] == "pass" for c in result.report["checks"] if c["id"] not in RAISES[bug])


def test_large_logits_names_the_formula_mistake():
    message = grade(BUGGY / "reduction_mean.py").check("large-logits-stable")["message"]
    assert "batchmean" in message and "not instability" in message and "this follows from the check" in message
