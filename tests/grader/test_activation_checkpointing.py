"""activation_checkpointing: the reference plots the memory it keeps per segment count (its grades and
buggy solutions: test_mutants.py)."""

from __future__ import annotations

from gradeutil import EXERCISES
from warmutil import warm_report

REFERENCE = EXERCISES / "activation_checkpointing" / "reference.py"


def up_front(items) -> list[tuple[str, tuple]]:
    return [("warm", (str(REFERENCE), "--device", "cpu"))]


def test_reference_plots_kept_memory_per_segment_count():
    # The JSON report leaves check data out: the runner's report carries it (what the TUI plots).
    report = warm_report(REFERENCE, "--device", "cpu")
    curves = next(c.data["curves"] for c in report.checks if c.id == "memory-saved")
    assert curves["x"] == "segments"
    kept, plain = curves["series"]["reference"], curves["series"]["no checkpointing"]
    # One region input kept per segment: rising with the segment count, all far below no checkpointing.
    assert len(kept) == 6 and kept == sorted(kept) and kept[-1] < plain[0] / 2
    assert curves["series"]["yours"] == kept
