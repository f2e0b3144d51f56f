"""amp_training: what its report and the human-readable grade say beyond the checks (its grades and
buggy solutions: test_mutants.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from gradeutil import BUGGY, EXERCISES, grade

REFERENCE = EXERCISES / "amp_training" / "reference.py"
CUDA_GATED = BUGGY / "amp_training" / "cuda_gated.py"  # a loop that turns AMP off off-CUDA


def up_front(items) -> list[tuple[str, tuple]]:
    return [("cold", (str(REFERENCE),))]


def test_the_reference_report_names_its_device_and_schema():
    result = grade(REFERENCE)
    assert result.code == 0, result.report
    assert result.report["device"] == "cpu" and result.report["schema"] == 1


def test_cuda_gate_note_printed_once_at_the_top():
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(CUDA_GATED), "--device", "cpu"],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    lines = out.stdout.splitlines()
    notes = [i for i, line in enumerate(lines) if line.startswith("Note: your loop turns autocast/the scaler off")]
    assert out.returncode == 1 and len(notes) == 1 and notes[0] == 1, out.stdout[:3000]
