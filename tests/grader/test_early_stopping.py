"""early_stopping: the plots of its patience check (its grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

from gradeutil import BUGGY
from warmutil import warm_report

STOPS_ONE_LATE = BUGGY / "early_stopping" / "stops_one_late.py"
DOES_NOTHING = BUGGY / "early_stopping" / "does_nothing.py"


def up_front(items) -> list[tuple[str, tuple]]:
    return [("warm", (str(STOPS_ONE_LATE),)), ("warm", (str(DOES_NOTHING),))]


def test_plot_shows_the_stop_and_the_restored_call():
    # The JSON report leaves check data out: the runner's report carries it (what the TUI plots).
    report = warm_report(STOPS_ONE_LATE)
    curves = next(c.data["curves"] for c in report.checks if c.id == "patience")
    assert curves["title"] == "val loss, best: ref stops at 9 holding 6; yours at 10 holding 6"
    metrics, ref, yours = (curves["series"][k] for k in ("val loss", "reference", "yours"))
    assert len(ref) == 10 and len(yours) == 11 and len(metrics) > len(yours)
    assert ref[6:] == [0.63] * 4 and yours[-1] == 0.63  # best holds from the restored call on


def test_plot_names_a_series_it_cannot_draw():
    # A stopper that keeps no `best` has no point to draw, and plotext leaves such a series out of the
    # legend: the plot says so instead of showing two of its three series.
    from quizapp.grading.render import plot_text

    report = warm_report(DOES_NOTHING)
    curves = next(c.data["curves"] for c in report.checks if c.id == "patience")
    assert set(curves["series"]) == {"val loss", "reference", "yours"}
    assert "(yours: no value to plot)" in plot_text(curves, width=80)
