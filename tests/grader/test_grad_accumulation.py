"""grad_accumulation: the reference passes, the starter fails cleanly, and each deliberately
buggy solution fails exactly the checks that describe its bug (graded through the public CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import grade_exercise_files, statuses
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
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(EXERCISE, BUGGY)


def test_reference_passes():
    code, report = grade(EXERCISE / "reference.py")
    assert report["status"] == "pass", report
    assert code == 0
    assert statuses(report) == {cid: "pass" for cid in CHECK_IDS}


def test_starter_fails_cleanly():
    code, report = grade(EXERCISE / "starter.py")
    assert code == 1
    assert report["status"] == "fail"
    assert [c["id"] for c in report["checks"]] == CHECK_IDS
    for check in report["checks"]:
        assert check["status"] in ("fail", "error")
        assert check["message"]
        assert "internal grader error" not in check["message"]
    assert "NotImplementedError" in report["checks"][0]["message"]


def test_every_check_is_caught_by_some_bug():
    assert set().union(*BUGS.values()) == set(CHECK_IDS)
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    code, report = grade(BUGGY / f"{bug}.py")
    assert code == 1
    seen = statuses(report)
    failed = {cid for cid, status in seen.items() if status != "pass"}
    assert failed == BUGS[bug], {c["id"]: c["message"] for c in report["checks"] if c["status"] != "pass"}
    for cid in BUGS[bug]:
        assert seen[cid] == "fail"
        message = next(c["message"] for c in report["checks"] if c["id"] == cid)
        assert any(ch.isdigit() for ch in message), message
