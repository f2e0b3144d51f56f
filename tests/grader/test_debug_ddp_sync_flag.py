"""The debug_ddp_sync_flag drill (2 gloo ranks on the CPU): the broken script's ranks drift apart,
the fixed one passes, rewrites of the fix pass, and every cosmetic fix or near miss fails with a
message that names what it did."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    DOES_NOTHING,
    DRILL_CHECKS,
    assert_cosmetic_fix_named,
    assert_drill_starter_shows_symptom,
    assert_passes,
    assert_reference_passes,
    grade_exercise_files,
    graded,
)

EXERCISE = "debug_ddp_sync_flag"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
SYMPTOM = "ranks-agree"
CHECK_IDS = [SYMPTOM, *DRILL_CHECKS]

# Thirteen grades, each starting 2 ranks: room on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(900)

# cosmetic fix -> (words its honest-fix message holds, whether the symptom is hidden by it)
COSMETIC = {
    "lr_zero": (("the learning rate was 0 at all 8 steps",), True),
    "lower_lr": (("the learning rate at step 0 was 0.01 where the fixed script uses 0.1",), False),
    "fewer_steps": (("4 forward passes where the fixed script runs 32", "1 optimizer step ran"), False),
    "one_micro_batch_per_step": (("8 forward passes where the fixed script runs 32",), True),
    "broadcast_rank0": (("dist.broadcast 32 times", "hides the drift"), True),
    "step_every_micro_batch": (("32 optimizer steps ran where the fixed script takes 8",
                                "drops the gradient accumulation"), True),
}
# Right weights, wrong set-up: they train the fixed script's model (matches-fixed-run passes), but
# honest-fix names what they changed.
SAME_WEIGHTS = {
    # the flag deleted: DDP all-reduces after every micro-batch
    "flag_removed": ("4 all-reduces per step where the fixed script does 1",),
    # KellerJordan/modded-nanogpt#31: no_sync() around the backward only, the forward outside it
    "no_sync_backward_only": ("4 all-reduces per step where the fixed script does 1", "inside model.no_sync()"),
    "unwrapped_manual_allreduce": ("32 of 32 forward passes called model.module directly",
                                   "dist.all_reduce was called by hand 128 times"),
}
# Hides nothing, syncs right, but returns another loss: (words of the matches-fixed-run message)
NEAR_MISSES = {
    "loss_averaged_over_ranks": ("the weights match the fixed run's, only the returned losses differ",),
}
ALTERNATIVES = ["ok_no_sync_context", "ok_flag_before_forward"]


@pytest.fixture(scope="module", autouse=True)
def _graded_up_front():
    grade_exercise_files(FOLDER, BUGGY)


def test_every_buggy_file_is_listed():
    assert {p.stem for p in BUGGY.glob("*.py")} == set(COSMETIC) | set(SAME_WEIGHTS) | set(NEAR_MISSES) | set(ALTERNATIVES) | {DOES_NOTHING}


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_shows_the_drift():
    assert_drill_starter_shows_symptom(FOLDER, SYMPTOM, (
        "the symptom is still there", "after 8 steps the two ranks' weights differ by",
        "they first differed after step 1",
        "DDP all-reduced the gradients once in every step, after micro-batch 1 of 4",
        "after micro-batch 4 of 4"))


def test_starter_names_where_the_all_reduce_went():
    code, report = graded(FOLDER / "starter.py")
    matches = next(c for c in report["checks"] if c["id"] == "matches-fixed-run")
    assert matches["status"] == "fail"
    where = "after micro-batch 1 of 4, where the fixed script all-reduces after micro-batch 4 of 4"
    assert where in matches["message"], matches["message"]


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_right_fix_written_another_way_passes(name):
    assert_passes(BUGGY / f"{name}.py")


@pytest.mark.parametrize("name", sorted(COSMETIC))
def test_cosmetic_fix_is_named(name):
    words, hidden = COSMETIC[name]
    assert_cosmetic_fix_named(BUGGY / f"{name}.py", words, symptom_id=SYMPTOM, symptom_gone=hidden)


@pytest.mark.parametrize("name", sorted(SAME_WEIGHTS))
def test_right_weights_wrong_set_up_is_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "pass" and checks["matches-fixed-run"]["status"] == "pass", checks
    assert checks["honest-fix"]["status"] == "fail"
    assert all(w in checks["honest-fix"]["message"] for w in SAME_WEIGHTS[name]), checks["honest-fix"]["message"]


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_is_named(name):
    code, report = graded(BUGGY / f"{name}.py")
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert checks[SYMPTOM]["status"] == "pass" and checks["honest-fix"]["status"] == "pass", checks
    assert checks["matches-fixed-run"]["status"] == "fail"
    assert all(w in checks["matches-fixed-run"]["message"] for w in NEAR_MISSES[name]), checks["matches-fixed-run"]
