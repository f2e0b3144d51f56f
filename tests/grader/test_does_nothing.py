"""A solution that runs nothing (tests/grader/buggy/<exercise>/does_nothing.py: the names the grader calls,
returning at once) passes no check of any exercise: a check whose subject never happened (no forward,
no step, no stop, nothing quantized or pruned) is skipped and says so, and the grade fails on the
checks that compare results."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import DOES_NOTHING, EXERCISES, grade_many

from quizapp.grading.harness import NOTHING_TO_CHECK, CheckSkipped, happened, nothing_to_check

BUGGY = Path(__file__).parent / "buggy"
EXERCISE_IDS = sorted(p.name for p in EXERCISES.iterdir() if (p / "checks.py").is_file())
# Checks a solution that does nothing still passes on merit: what they judge is there.
# lora: its constructor stores the adapter it is given (scaling = alpha / rank); nothing uses it.
STILL_PASSES = {"lora": {"lora-scaling"}}
# The checks whose subject never happened, by exercise: they must be skipped, not passed.
# Before this file, a do-nothing solution passed 6 of amp_training's 14 checks.
SKIPPED = {
    "amp_training": {"returns-losses", "autocast-forward", "backward-outside-autocast", "master-weights-fp32",
                     "grad-scaler", "loss-scaled", "step-through-scaler", "update-every-iteration", "zero-grad",
                     "overflow-skips-step", "clip-after-unscale"},
    "activation_checkpointing": {"memory-saved"},
    "ddp_accumulation": {"returns-step-count", "ranks-identical", "no-zero-inside-group", "one-all-reduce-per-group",
                         "no-sync-until-last"},
    "grad_accumulation": {"returns-step-count", "no-zero-inside-group"},
    "distillation": {"no-grad-to-teacher", "teacher-eval-mode", "teacher-unchanged", "teacher-no-graph"},
    "early_stopping": {"restore", "copy-of-state", "buffers", "restore-best-false"},
    "fake_quant": {"all-zero", "tiny-amax", "dtype-shape-kept"},
    "label_smoothing": {"no-builtin-smoothing"},
    "lora": {"lora-dropout", "add-lora-twice"},
    "loss_scaler": {"growth-only-if-finite"},
    "magnitude_pruning": {"global-ranking", "biases-kept", "linear-and-conv-only", "stays-zero-new-optimizer",
                          "stays-zero-optimizer-state", "survivors-train", "channels-stay-zero",
                          "permanent-plain-parameter", "permanent-same-outputs"},
    "mixup_cutmix": {"labels-follow-pixels", "targets-shape-dtype", "x-y-unchanged", "soft-ce-large-logits"},
    "warmup_cosine": {"param-groups", "resume"},
}
DRILL_SYMPTOM = "the training function ran no forward pass and no optimizer step"


def path(exercise: str) -> Path:
    return BUGGY / exercise / f"{DOES_NOTHING}.py"


@pytest.fixture(scope="module")
def reports() -> dict:
    graded = grade_many([(str(path(e)),) for e in EXERCISE_IDS])
    return {e: g for e, g in zip(EXERCISE_IDS, graded)}


def test_every_exercise_has_a_solution_that_does_nothing():
    assert [e for e in EXERCISE_IDS if not path(e).is_file()] == []
    for e in EXERCISE_IDS:
        assert path(e).read_text().splitlines()[0] == f"# quizapp: exercise={e}"


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_nothing_run_passes_nothing(reports, exercise):
    result = reports[exercise]
    assert result.code == 1 and result.report["status"] == "fail", result.report
    checks = result.report["checks"]
    passed = {c["id"] for c in checks if c["status"] == "pass"}
    assert passed == STILL_PASSES.get(exercise, set()), passed
    # The verdict rests on a real failure, not on the skips alone.
    assert any(c["status"] == "fail" for c in checks)
    assert not any(c["status"] == "error" for c in checks), [c for c in checks if c["status"] == "error"]


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_what_never_happened_is_skipped_and_says_so(reports, exercise):
    checks = reports[exercise].report["checks"]
    skipped = {c["id"]: c["message"] for c in checks if c["status"] == "skip"}
    assert all(m.startswith(NOTHING_TO_CHECK) for m in skipped.values()), skipped
    if exercise.startswith("debug_"):  # a drill: its symptom check, and honest-fix says nothing ran
        assert skipped == {checks[0]["id"]: NOTHING_TO_CHECK + DRILL_SYMPTOM}
        honest = next(c for c in checks if c["id"] == "honest-fix")
        assert honest["status"] == "fail" and honest["message"].startswith("nothing ran: "), honest
    else:
        assert set(skipped) == SKIPPED[exercise]


def test_amp_training_failures_say_the_loop_never_ran(reports):
    checks = {c["id"]: c for c in reports["amp_training"].report["checks"]}
    never_ran = "the loop never ran: no forward, no backward and no optimizer step"
    assert checks["autocast-forward"]["message"] == NOTHING_TO_CHECK + never_ran
    for cid in ("loss-parity-fp16", "loss-parity-bf16", "close-to-fp32"):
        assert checks[cid]["status"] == "fail"
        assert never_ran in checks[cid]["message"], checks[cid]


def test_happened_hands_back_what_ran_and_skips_what_did_not():
    assert happened(iter([1, 2]), "backward()") == [1, 2]
    with pytest.raises(CheckSkipped, match=r"^nothing to check: backward\(\) never ran$"):
        happened((e for e in ()), "backward()")
    with pytest.raises(CheckSkipped, match="^nothing to check: step never returned True$"):
        nothing_to_check("step never returned True")
