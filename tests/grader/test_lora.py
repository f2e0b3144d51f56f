"""lora: the reference passes, the starter fails cleanly, and each deliberately buggy solution
fails the checks that describe its bug (graded through the public CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeutil import grade_exercise_files, statuses
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
    "fp32_adapters": ({"lora-bf16"}, set()),
    # wrong shapes make the formulas themselves fail to run: those checks report the solution's error
    "a_transposed": ({"lora-shapes"}, {"lora-forward", "lora-merge", "lora-gradients"}),
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
        assert "NotImplementedError" in check["message"] or "same error as" in check["message"]


def test_every_check_is_caught_by_some_bug():
    assert set().union(*(must for must, _ in BUGS.values())) == set(CHECK_IDS)
    assert {p.stem for p in BUGGY.glob("*.py")} == set(BUGS)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    must, allowed = BUGS[bug]
    code, report = grade(BUGGY / f"{bug}.py")
    assert code == 1
    seen = statuses(report)
    messages = {c["id"]: c["message"] for c in report["checks"] if c["status"] != "pass"}
    for cid in must:
        assert seen[cid] == "fail", messages
        assert messages[cid] and "internal grader error" not in messages[cid]
    not_passing = {cid for cid, status in seen.items() if status != "pass"}
    assert must <= not_passing <= must | allowed, messages
