"""ddp_accumulation: the reference plots its all-reduces per micro-batch, a rank that dies, raises or
never joins an all-reduce ends the grade with a clear error within seconds, and spawned ranks record
what forked ones do (its grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

import pytest
from gradeutil import BUGGY, EXERCISES, grade_many
from warmutil import warm_report

EXERCISE = EXERCISES / "ddp_accumulation"
BROKEN = BUGGY / "ddp_accumulation" / "broken"
# --timeout well above the launch's own limits: a broken rank must be reported by the grader's
# rank supervision, not by the grade's timeout
BROKEN_TIMEOUT = "110"


def broken(name: str) -> tuple[str, ...]:
    return (str(BROKEN / f"{name}.py"), "--timeout", BROKEN_TIMEOUT)


def up_front(items) -> list[tuple[str, tuple]]:
    names = {i.callspec.params["name"] for i in items if "name" in getattr(getattr(i, "callspec", None), "params", {})}
    jobs = [("cold", broken(name)) for name in sorted(names)]
    if any(i.name == "test_reference_plots_all_reduces_per_micro_batch" for i in items):
        jobs.append(("warm", (str(EXERCISE / "reference.py"),)))
    return jobs


def test_reference_plots_all_reduces_per_micro_batch():
    # The plot's data is not part of --json: ask the runner's report, as the TUI does.
    report = warm_report(EXERCISE / "reference.py")
    check = next(c for c in report.checks if c.id == "one-all-reduce-per-group")
    assert check.status == "pass", check
    series = check.data["curves"]["series"]
    assert series["yours"] == series["reference"] == [0, 0, 1, 0, 0, 1]


@pytest.mark.timeout(900)  # graded up front; alone, three grades that each start 2 ranks
@pytest.mark.parametrize("name, says", [
    ("rank_exits", "rank 1 (in run divisible/SGD-momentum) ended its process early (exit code 3)"),
    ("rank_raises", "rank 1 in run divisible/SGD-momentum: RuntimeError: rank 1 lost its data shard"),
    ("rank_skips_all_reduce", "waited at a collective (DDP's all-reduce) that the other rank never reached"),
])
def test_broken_rank_is_a_clear_error_not_a_hang(name, says):
    result = grade_many([broken(name)])[0]
    report = result.report
    assert result.code == 1 and report["status"] == "fail", report
    assert "timed out" not in (report["message"] or "")
    for check in report["checks"]:
        assert check["status"] == "error", check
        assert "internal grader error" not in check["message"] and "Traceback" not in check["message"], check
    first = report["checks"][0]["message"]
    assert says in first, first


def test_spawned_ranks_record_the_same_as_forked_ones():
    """CUDA grades spawn the ranks (a CUDA context does not survive a fork): that path records every
    run too, here with gloo on the CPU."""
    import importlib.util
    import sys

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    scn = load("quizapp_ddp_scenarios", EXERCISE / "scenarios.py")
    from quizapp.checking import launch as launcher
    reference = load("ddp_reference_for_spawn", EXERCISE / "reference.py")
    keys = [scn.run_key(run) for run in scn.RUNS]
    result = launcher.launch(EXERCISE, reference, world=2, backend="gloo", devices=["cpu", "cpu"], runs=keys,
                             fork=False)
    assert result.stopped is None
    records = [result.run(i, key) for i, key in enumerate(keys)]
    for both in records:
        assert both[0]["step_params"] == both[1]["step_params"]
        assert [e["kind"] for e in both[0]["events"]].count("allreduce") == len(both[0]["step_params"])
    assert records[0][0]["returned"] == {"type": "int", "repr": "2", "value": 2}
