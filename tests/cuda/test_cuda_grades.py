"""On a GPU, the grader says on CUDA what it says on the CPU: every exercise's (and drill's) reference
passes with `--device cuda`, its starter fails cleanly, and every buggy solution fails the same checks
as with `--device cpu`. Exercises and bugs are found on disk (tests/cuda/matrix.py), so new ones join
without an edit here.

What may differ, and is allowed for: a check skipped on the CPU as meaningless there may run on CUDA;
a loop that turns AMP off when the device is not CUDA (its CPU message says "this grade ran on CPU")
passes those checks on CUDA, and may pass the ones that failed on the CPU as their consequence. Anything else that differs is a finding: CUDA's reductions run in other
orders (and some nondeterministically), its autocast casts other ops, its float16 matmuls run on
tensor cores, so a tolerance tuned on the CPU can be too tight (or a bug's signal too faint) there.
"""

from __future__ import annotations

import matrix
import pytest
import torch

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA tests: this machine has no CUDA GPU "
                       "(benchmarks/gpu/run.sh runs them on one)"),
    pytest.mark.timeout(3600),
]

EXERCISES = [d.name for d in matrix.exercise_dirs()]
STARTERS = [d.name for d in matrix.exercise_dirs() if (d / "starter.py").is_file()]
BUGS = [(ex, p.name) for ex in EXERCISES for p in matrix.buggy_files(ex)]


@pytest.fixture(scope="module")
def graded() -> dict:
    return matrix.ensure(matrix.jobs())


def result(graded: dict, kind: str, path: str, device: str) -> dict:
    found = graded[(kind, path, device)]
    if found["status"] == "not-run":
        pytest.skip(found["report"]["message"])
    assert found["code"] != -1, found["report"]["message"]
    return found


def no_grader_errors(report: dict) -> None:
    said = [c for c in report.get("checks", []) if "internal grader error" in (c.get("message") or "")]
    assert said == [] and "internal grader error" not in (report.get("message") or ""), said or report["message"]


def test_the_matrix_is_found_on_disk():
    assert "amp_training" in EXERCISES and BUGS
    assert all(any(ex == e for e, _ in BUGS) for ex in ("amp_training", "grad_accumulation"))


@pytest.mark.parametrize("exercise", EXERCISES)
def test_reference_passes_on_cuda(graded, exercise):
    path = f"exercises/{exercise}/reference.py"
    cuda = result(graded, "reference", path, "cuda")
    report = cuda["report"]
    no_grader_errors(report)
    assert report.get("device") == "cuda", report
    failing = {c["id"]: c["message"] for c in report["checks"] if c["status"] in ("fail", "error")}
    assert cuda["code"] == 0 and report["status"] == "pass" and not failing, failing or report.get("message")
    cpu = result(graded, "reference", path, "cpu")["report"]
    # CUDA never skips what the CPU runs: a skip is for checks meaningless without a GPU
    assert matrix.skipped(report) <= matrix.skipped(cpu), (matrix.skipped(report), matrix.skipped(cpu))
    assert [c["id"] for c in report["checks"]] == [c["id"] for c in cpu["checks"]]


@pytest.mark.parametrize("exercise", STARTERS)
def test_starter_fails_cleanly_on_cuda(graded, exercise):
    cuda = result(graded, "starter", f"exercises/{exercise}/starter.py", "cuda")
    report = cuda["report"]
    no_grader_errors(report)
    assert cuda["code"] == 1 and report["status"] in ("fail", "error"), report
    for check in report["checks"]:
        assert check["status"] in ("fail", "error") and check["message"], check


@pytest.mark.parametrize("exercise, bug", BUGS)
def test_bug_fails_the_same_checks_on_cuda(graded, exercise, bug):
    path = f"tests/grader/buggy/{exercise}/{bug}"
    cpu = result(graded, "buggy", path, "cpu")["report"]
    cuda_result = result(graded, "buggy", path, "cuda")
    cuda = cuda_result["report"]
    no_grader_errors(cuda)
    if cpu["status"] == "error" and not cpu["checks"]:  # it could not run at all on the CPU: nor on CUDA
        assert cuda["status"] == "error" and not cuda["checks"], cuda
        return
    assert cuda.get("device") == "cuda", cuda
    assert [c["id"] for c in cuda["checks"]] == [c["id"] for c in cpu["checks"]]
    only_cuda, only_cpu = matrix.verdicts_differ(cpu, cuda)
    assert not only_cuda and not only_cpu, {"fails on CUDA only": only_cuda, "fails on the CPU only": only_cpu}
    seen = matrix.not_passing(cuda)
    assert cuda_result["code"] == (1 if seen else 0), cuda
    said = matrix.messages(cuda)
    for cid in seen:
        assert said[cid], f"{cid} failed on CUDA without a message"
