"""A solution that runs nothing (tests/grader/buggy/<exercise>/does_nothing.py: the names the grader calls,
returning at once) passes no check of any exercise on merit: a check whose subject never happened (no
forward, no step, no stop, nothing quantized or pruned) is skipped and says so, and the grade fails on
the checks that compare results. Which check does what is in each file's header (test_mutants.py holds
it); here, the rules every exercise's does_nothing.py keeps."""

from __future__ import annotations

import pytest
from gradeutil import BUGGY, EXERCISE_IDS, grade_many

from quizapp.checking.harness import NOTHING_TO_CHECK, CheckSkipped, happened, nothing_to_check
from quizapp.grading.mutants import NOT_COUNTED

DOES_NOTHING = "does_nothing"
assert DOES_NOTHING in NOT_COUNTED  # it fails checks without being written for them
DRILL_SYMPTOM = "the training function ran no forward pass and no optimizer step"


def path(exercise: str):
    return BUGGY / exercise / f"{DOES_NOTHING}.py"


def up_front(items) -> list[tuple[str, tuple]]:
    return [("warm", (str(path(e)),)) for e in EXERCISE_IDS if path(e).is_file()]


@pytest.fixture(scope="module")
def reports() -> dict:
    graded = grade_many([(str(path(e)),) for e in EXERCISE_IDS])
    return {e: g for e, g in zip(EXERCISE_IDS, graded)}


def test_every_exercise_has_a_solution_that_does_nothing():
    assert [e for e in EXERCISE_IDS if not path(e).is_file()] == []
    for e in EXERCISE_IDS:
        assert path(e).read_text().splitlines()[0] == f"# quizapp: exercise={e}"


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_nothing_run_fails_and_raises_nothing(reports, exercise):
    result = reports[exercise]
    assert result.code == 1 and result.report["status"] == "fail", result.report
    checks = result.report["checks"]
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
