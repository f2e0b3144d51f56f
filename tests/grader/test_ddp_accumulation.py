"""ddp_accumulation: the reference passes on 2 gloo ranks, the starter fails cleanly, each buggy
solution fails exactly the checks that describe its bug, and a rank that dies, raises or never
joins an all-reduce ends the grade with a clear error within seconds (graded through the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
    grade_many,
    graded,
)

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "ddp_accumulation"
BUGGY = Path(__file__).resolve().parent / "buggy" / "ddp_accumulation"
BROKEN = BUGGY / "broken"

# Fifteen grades, each starting 2 ranks: on a loaded 2-core machine the module's set-up alone can
# pass the suite's default 300 s.
pytestmark = pytest.mark.timeout(900)

CHECK_IDS = [
    "optimizer-steps", "returns-step-count", "divisible-matches-single-process", "trailing-group",
    "short-last-micro-batch", "ranks-identical", "no-zero-inside-group", "one-all-reduce-per-group", "no-sync-until-last",
    "clip-accumulated",
]
NUMERIC = {"divisible-matches-single-process", "trailing-group", "short-last-micro-batch", "clip-accumulated"}

# bug file -> the checks it must fail; every other check must pass
BUGS = {
    "sync_every_micro_batch": {"one-all-reduce-per-group", "no-sync-until-last"},
    "no_sync_backward_only": {"one-all-reduce-per-group", "no-sync-until-last"},
    "last_inside_no_sync": NUMERIC | {"ranks-identical", "one-all-reduce-per-group", "no-sync-until-last"},
    "first_micro_batch_synced": NUMERIC | {"ranks-identical", "no-sync-until-last"},
    # clipping to a norm below the gradient's hides a uniform scale, so the clip run passes
    "divide_by_world_size": NUMERIC - {"clip-accumulated"},
    "divide_by_accum_steps": {"trailing-group", "short-last-micro-batch"},
    "drops_trailing_group": {"optimizer-steps", "trailing-group", "short-last-micro-batch", "clip-accumulated"},
    "no_clip": {"clip-accumulated"},
    "clips_each_micro_batch": {"clip-accumulated"},
    "wrong_return_count": {"returns-step-count"},
    # fairseq's train_step zeroes at the start of each update: the last group's gradients stay in .grad
    "zero_at_group_start": {"no-zero-inside-group"},
    # Composer's loop: exact, the whole group inside optimizer.step(closure), the same leftover
    "closure_leftover_grads": {"no-zero-inside-group"},
}
# Closure loops that meet the contract (Lightning runs the group's last micro-batch inside
# optimizer.step(closure), Composer the whole group); both call len(loader).
ALTERNATIVES = ["ok_closure_lightning", "ok_closure_composer"]
# --timeout well above the launch's own limits: a broken rank must be reported by the grader's
# rank supervision, not by the grade's timeout
BROKEN_TIMEOUT = "110"


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(EXERCISE, BUGGY)
    grade_many([(str(p), "--timeout", BROKEN_TIMEOUT) for p in sorted(BROKEN.glob("*.py"))])


def test_reference_passes():
    assert_reference_passes(EXERCISE, CHECK_IDS)


def test_reference_plots_all_reduces_per_micro_batch():
    # The plot's data is not part of --json: ask the runner, as the TUI does.
    from quizapp.grading.runner import grade

    report = grade(EXERCISE / "reference.py", EXERCISE, exercise_id="ddp_accumulation")
    check = next(c for c in report.checks if c.id == "one-all-reduce-per-group")
    assert check.status == "pass", check
    series = check.data["curves"]["series"]
    assert series["yours"] == series["reference"] == [0, 0, 1, 0, 0, 1]


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(EXERCISE, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_closure_loops_that_meet_the_contract_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug", ["closure_leftover_grads", "zero_at_group_start"])
def test_gradients_left_after_the_last_step_are_named(bug):
    _, report = graded(BUGGY / f"{bug}.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "no-zero-inside-group")
    assert "after the function returned, 4 parameters still held gradients" in message, message
    assert "the last group's gradients were never zeroed" in message, message


def test_last_micro_batch_inside_no_sync_is_explained():
    _, report = graded(BUGGY / "last_inside_no_sync.py")
    messages = {c["id"]: c["message"] for c in report["checks"]}
    assert "all-reduced gradients 0 times" in messages["one-all-reduce-per-group"]
    assert "the last micro-batch ran inside no_sync" in messages["no-sync-until-last"]


def test_no_sync_around_backward_only_is_explained():
    _, report = graded(BUGGY / "no_sync_backward_only.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "no-sync-until-last")
    assert "DDP decides at forward time" in message


@pytest.mark.parametrize("name, says", [
    ("rank_exits", "rank 1 (in run divisible/SGD-momentum) ended its process early (exit code 3)"),
    ("rank_raises", "rank 1 in run divisible/SGD-momentum: RuntimeError: rank 1 lost its data shard"),
    ("rank_skips_all_reduce", "waited at a collective (DDP's all-reduce) that the other rank never reached"),
])
def test_broken_rank_is_a_clear_error_not_a_hang(name, says):
    result = grade_many([(str(BROKEN / f"{name}.py"), "--timeout", BROKEN_TIMEOUT)])[0]
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
    from quizapp.grading import launch as launcher
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
