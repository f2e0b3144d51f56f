"""The early_stopping exercise: the reference passes, the starter fails cleanly, and each buggy
solution fails the check that names its bug (and passes the checks unrelated to it); correct
solutions written another way (a deep-copied model, a deep-copied state dict with a sign for
mode 'max', a torch.save round trip) pass, and an error names the inputs that raised it."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    DOES_NOTHING,
    assert_bug_fails,
    assert_errors_name_inputs,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade
from warmutil import grader

from quizapp.grading import runner

EXERCISE = "early_stopping"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["patience", "min-delta", "mode-max", "best-and-epoch", "non-finite", "restore", "copy-of-state",
             "buffers", "restore-best-false", "defaults", "validation"]

# bug file -> the checks it must fail; every other check must pass.
BUGS = {
    "stops_one_late": {"patience"},
    "counter_not_reset": {"patience"},
    "returns_none_to_go_on": {"patience"},
    "min_delta_wrong_way": {"min-delta"},
    "reset_on_small_gain": {"min-delta"},
    # Both modes compare this way, and both scenarios have a tie at exactly min_delta or a relative
    # threshold above the absolute one.
    "ties_count": {"min-delta", "mode-max"},
    "relative_min_delta": {"min-delta", "mode-max"},
    # A sub-min_delta gain moves best in both modes, and best then names another call than best_epoch.
    "best_creeps": {"min-delta", "mode-max", "best-and-epoch"},
    # Both modes, and the restore check judges the state against the solution's own best.
    "min_delta_ignored": {"min-delta", "mode-max"},
    "best_moves_on_small_gain": {"min-delta", "mode-max"},
    "mode_ignored": {"mode-max"},
    "max_min_delta_wrong_way": {"mode-max"},
    "min_delta_only_in_min": {"mode-max"},
    "best_starts_at_zero": {"mode-max"},
    "best_epoch_one_based": {"best-and-epoch"},
    "best_negated_in_max": {"best-and-epoch"},
    "best_as_float32": {"best-and-epoch"},
    "nan_counts_as_no_improvement": {"non-finite"},
    "isnan_only": {"non-finite"},
    "nan_becomes_best": {"non-finite"},
    "first_call_skips_nan_check": {"non-finite"},
    "no_restore": {"restore"},
    "restore_method_uncalled": {"restore"},
    "restores_on_next_call": {"restore"},
    "restores_only_on_patience": {"restore"},
    "snapshot_every_call": {"restore"},
    "rollback_each_bad_epoch": {"restore"},
    "saves_on_any_gain": {"restore"},
    "state_dict_alias": {"copy-of-state"},
    "detach_is_not_a_copy": {"copy-of-state"},
    "params_only": {"buffers"},
    "ignores_restore_best": {"restore-best-false"},
    "wrong_default_patience": {"defaults"},
    "default_patience_ten": {"defaults"},
    "no_validation": {"validation"},
}
ALTERNATIVES = ["ok_deepcopy_model", "ok_deepcopy_state_sign", "ok_bytesio"]
# solutions that raise: bug file -> {check id: how its error message starts}
RAISES = {
    "asserts_nonnegative_metric": {
        "mode-max": "with EarlyStopping(patience=20, min_delta=0, mode='max'), metrics [-3.5, -2.25, -2.5, -1.75, "
                    "-1.75, -2], call 0 (metric -3.5): AssertionError",
        "best-and-epoch": "with EarlyStopping(patience=20, min_delta=0, mode='max'), metrics [-3.5, -2.25, -2.5, "
                          "-1.75, -1.75, -2], call 0 (metric -3.5): AssertionError",
        "non-finite": "with EarlyStopping(patience=3, min_delta=0, mode='min'), metrics [1, -inf, -inf, -inf, -inf, "
                      "-inf], call 1 (metric -inf): AssertionError",
    },
}
# bug file -> (check id, words its message must hold): the message names the mistake.
NAMES_THE_MISTAKE = {
    "stops_one_late": ("patience", ["one call late", "ReduceLROnPlateau"]),
    "counter_not_reset": ("patience", ["not reset"]),
    "returns_none_to_go_on": ("patience", ["returned None at call 0", "return a bool"]),
    "min_delta_wrong_way": ("min-delta", ["wrong way", "best + min_delta"]),
    "ties_count": ("min-delta", ["exactly min_delta"]),
    "relative_min_delta": ("min-delta", ["relative", "threshold_mode='rel'"]),
    "reset_on_small_gain": ("min-delta", ["restarts at any better metric"]),
    "best_creeps": ("min-delta", ["best moves to every better metric", "leaves best alone"]),
    "min_delta_ignored": ("min-delta", ["min_delta is ignored", "never stops"]),
    "best_moves_on_small_gain": ("min-delta", ["best moves on small gains", "stops earlier"]),
    "mode_ignored": ("mode-max", ["mode is ignored"]),
    "max_min_delta_wrong_way": ("mode-max", ["best - min_delta"]),
    "min_delta_only_in_min": ("mode-max", ["mode='min' only"]),
    "best_starts_at_zero": ("mode-max", ["starts at 0", "first call always improves"]),
    "best_epoch_one_based": ("best-and-epoch", ["0-based"]),
    "best_negated_in_max": ("best-and-epoch", ["metric itself"]),
    "best_as_float32": ("best-and-epoch", ["best is 0.8199999928474426", "call 1's metric 0.82 rounded to float32",
                                           "exactly as it was passed"]),
    "nan_counts_as_no_improvement": ("non-finite", ["just another call without improvement", "isfinite"]),
    "isnan_only": ("non-finite", ["math.isnan(inf) is False", "1 call later"]),
    "nan_becomes_best": ("non-finite", ["took it as best", "isfinite"]),
    "first_call_skips_nan_check": ("non-finite", ["on the first call too", "the first call included"]),
    "no_restore": ("restore", ["call 4's values", "load_state_dict"]),
    "restore_method_uncalled": ("restore", ["restore_best_weights", "step does not call"]),
    "restores_on_next_call": ("restore", ["next call"]),
    "restores_only_on_patience": ("restore", ["from the nan metric", "both places that stop"]),
    "snapshot_every_call": ("restore", ["did call load_state_dict", "call 4's values"]),
    "rollback_each_bad_epoch": ("restore", ["returned False", "changed the model"]),
    "saves_on_any_gain": ("restore", ["call 1's weights", "call 2's values", "Call 2's 0.895 beat best 0.9 (call 1)",
                                      "no more than min_delta=0.01", "saves nothing"]),
    "state_dict_alias": ("copy-of-state", ["in place", "share memory", "self.best_state"]),
    "detach_is_not_a_copy": ("copy-of-state", [".detach()", "share memory"]),
    "params_only": ("buffers", ["running_mean", "named_parameters()"]),
    "ignores_restore_best": ("restore-best-false", ["restore_best=False"]),
    "wrong_default_patience": ("defaults", ["patience is 5", "0.4999999"]),
    "default_patience_ten": ("defaults", ["EarlyStopping() never returned True within the 11 calls",
                                          "returned True at call 7", "patience is 5"]),
}
# bug file -> (check id, words its message must not hold): a cause it does not have.
NOT_THE_MISTAKE = {
    "best_moves_on_small_gain": ("min-delta", ["ignored"]),
    "min_delta_ignored": ("min-delta", ["best moves on small gains"]),
    "default_patience_ten": ("defaults", ["call None"]),
}
# A min_delta mistake made in both modes: mode-max names the min-delta check's cause, not one of its own.
SHARED_CAUSE = {
    "min_delta_ignored": "min_delta is ignored",
    "best_moves_on_small_gain": "best moves on small gains",
    "best_creeps": "best moves to every better metric",
    "ties_count": "exactly min_delta",
}


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def test_starter_fails_cleanly():
    assert_starter_fails_cleanly(FOLDER, CHECK_IDS)


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, [*ALTERNATIVES, *RAISES])


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("bug", sorted(NAMES_THE_MISTAKE))
def test_message_names_the_mistake(bug):
    check_id, words = NAMES_THE_MISTAKE[bug]
    _, report = grade(BUGGY / f"{bug}.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == check_id)
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize("bug", sorted(NOT_THE_MISTAKE))
def test_message_names_no_other_mistake(bug):
    check_id, words = NOT_THE_MISTAKE[bug]
    _, report = grade(BUGGY / f"{bug}.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == check_id)
    for word in words:
        assert word not in message, (word, message)


@pytest.mark.parametrize("bug", sorted(SHARED_CAUSE))
def test_mode_max_names_the_min_delta_cause(bug):
    _, report = grade(BUGGY / f"{bug}.py")
    message = next(c["message"] for c in report["checks"] if c["id"] == "mode-max")
    assert SHARED_CAUSE[bug] in message and "min-delta check" in message, message
    assert "mode='min' only" not in message, message


def test_buffer_bug_is_not_blamed_on_the_copy():
    _, report = grade(BUGGY / "params_only.py")
    assert next(c for c in report["checks"] if c["id"] == "copy-of-state")["status"] == "pass"


def test_plot_shows_the_stop_and_the_restored_call():
    # The JSON report leaves check data out: the runner's report carries it (what the TUI plots).
    report = runner.grade(BUGGY / "stops_one_late.py", FOLDER, exercise_id=EXERCISE, warm=grader())
    curves = next(c.data["curves"] for c in report.checks if c.id == "patience")
    assert curves["title"] == "val loss, best: ref stops at 9 holding 6; yours at 10 holding 6"
    metrics, ref, yours = (curves["series"][k] for k in ("val loss", "reference", "yours"))
    assert len(ref) == 10 and len(yours) == 11 and len(metrics) > len(yours)
    assert ref[6:] == [0.63] * 4 and yours[-1] == 0.63  # best holds from the restored call on


def test_plot_names_a_series_it_cannot_draw():
    # A stopper that keeps no `best` has no point to draw, and plotext leaves such a series out of the
    # legend: the plot says so instead of showing two of its three series.
    from quizapp.grading.render import plot_text

    report = runner.grade(BUGGY / f"{DOES_NOTHING}.py", FOLDER, exercise_id=EXERCISE, warm=grader())
    curves = next(c.data["curves"] for c in report.checks if c.id == "patience")
    assert set(curves["series"]) == {"val loss", "reference", "yours"}
    assert "(yours: no value to plot)" in plot_text(curves, width=80)


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug", sorted(RAISES))
def test_errors_name_the_inputs(bug):
    assert_errors_name_inputs(BUGGY / f"{bug}.py", RAISES[bug])
