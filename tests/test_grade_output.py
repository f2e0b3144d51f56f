"""`quizapp grade` with a reader that stops early: the grade is kept, and the command ends quietly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_grade_piped_into_a_reader_that_stops_early_is_still_recorded(quizapp_home, tmp_path):
    from quizapp.study.store import Store

    solution = tmp_path / "lora.py"
    solution.write_text((ROOT / "exercises" / "lora" / "reference.py").read_text())
    # `quizapp grade lora.py | head -1`: the reader takes one line and closes the pipe.
    grader = subprocess.Popen([sys.executable, "-m", "quizapp", "grade", str(solution)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    first = grader.stdout.readline()
    grader.stdout.close()
    stderr = grader.stderr.read().decode()
    grader.wait(timeout=600)
    assert first, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert grader.returncode == 0, stderr  # the grade's own verdict: a pass
    with Store.open() as store:
        assert [g.status for g in store.grades("lora")] == ["pass"]
