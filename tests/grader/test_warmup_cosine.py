"""The warmup_cosine exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import grade_exercise_files, statuses
from gradeutil import graded as grade

EXERCISE = "warmup_cosine"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["schedule-formula", "first-step-zero", "floor-past-end", "validation", "param-groups", "resume"]

# bug file -> the checks it must fail; every other check must pass.
BUGS = {
    "transformers_rises_past_end": {"floor-past-end"},
    "no_warmup_zero_first_step": {"schedule-formula", "first-step-zero"},
    "no_validation": {"validation"},
    "ignores_min_lr": {"schedule-formula", "floor-past-end"},
    "single_group_only": {"param-groups"},
    "not_resumable": {"resume"},
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    code, report = grade(FOLDER / "reference.py")
    assert code == 0, report
    assert report["status"] == "pass"
    assert statuses(report) == {cid: "pass" for cid in CHECK_IDS}
    curves = next(c for c in report["checks"] if c["id"] == "schedule-formula").get("data", {}).get("curves")
    if curves is not None:  # the JSON may or may not carry check data; when it does, it is the lr curve
        assert set(curves["series"]) == {"yours", "reference"}


def test_starter_fails_cleanly():
    code, report = grade(FOLDER / "starter.py")
    assert code == 1
    assert report["status"] == "fail"
    assert [c["id"] for c in report["checks"]] == CHECK_IDS
    for check in report["checks"]:
        assert check["status"] in ("fail", "error"), check
        assert check["message"], check
        assert "internal grader error" not in check["message"]


def test_every_check_is_failed_by_some_bug():
    assert set().union(*BUGS.values()) == set(CHECK_IDS)
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_check(bug):
    code, report = grade(BUGGY / f"{bug}.py")
    assert code == 1
    seen = statuses(report)
    for cid in CHECK_IDS:
        expected = "fail" if cid in BUGS[bug] else "pass"
        assert seen[cid] == expected, (cid, next(c for c in report["checks"] if c["id"] == cid))
        if expected == "fail":
            message = next(c["message"] for c in report["checks"] if c["id"] == cid)
            assert any(ch.isdigit() for ch in message), message  # says what it saw, in numbers


def test_transformers_bug_message_names_the_rise():
    _, report = grade(BUGGY / "transformers_rises_past_end.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "floor-past-end")
    assert "rising again" in message and "transformers" in message
