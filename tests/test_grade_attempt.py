"""The one grade use case every front end grades through (grading.attempt): what a grade records is
the same from `quizapp grade`, `quizapp watch`, the command-line interview and the app."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import signal
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console
from test_watch import next_line

from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.study.store import Store

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = "warmup_cosine"
# Fails at once, in the child's import of it: each grade takes a second or two, and is recorded.
FAILS_FAST = f"# quizapp: exercise={EXERCISE}\nraise RuntimeError('not written yet')\n"


def stored() -> list[tuple[str, str, str]]:
    """(file_path, the stored report's file, file_hash) of every grade, oldest first."""
    with Store.open() as store:
        rows = store.conn.execute("SELECT file_path, report, file_hash FROM grades ORDER BY id").fetchall()
    return [(path, json.loads(report)["file"], digest) for path, report, digest in rows]


def test_a_save_while_the_checks_run_does_not_lend_its_digest_to_the_result(tmp_path):
    """The solution saves a new version of its own file while it is graded: the grade recorded is the
    old content's, so it carries the old content's digest."""
    solution = tmp_path / "saves_itself.py"
    graded = (f"# quizapp: exercise={EXERCISE}\nfrom pathlib import Path\n"
              f"Path({str(solution)!r}).write_text('# quizapp: exercise={EXERCISE}\\n# saved meanwhile\\n')\n"
              "raise RuntimeError('the version graded')\n")
    solution.write_text(graded)
    result = CliRunner().invoke(cli, ["grade", str(solution), "--json"])
    assert result.exit_code == 1, result.output
    assert "the version graded" in json.loads(result.stdout)["message"]
    assert "saved meanwhile" in solution.read_text()  # the save did happen during the grade
    ((_, _, digest),) = stored()
    assert digest == hashlib.sha256(graded.encode()).hexdigest()


def test_every_front_end_stores_the_file_by_its_absolute_path(tmp_path, monkeypatch):
    """The same file, named relative to the folder each front end runs in: one path in the store, in the
    row and in its report, whichever front end graded it. The command line still shows it as typed."""
    (tmp_path / "sol.py").write_text(FAILS_FAST)
    monkeypatch.chdir(tmp_path)
    exercise = load_catalog()[EXERCISE]

    result = CliRunner().invoke(cli, ["grade", "sol.py", "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["file"] == "sol.py"

    watch = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", "sol.py", "--json-lines"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert next_line(watch, 240)["file"] == "sol.py"
    finally:
        watch.send_signal(signal.SIGINT)
        watch.communicate(timeout=60)

    from quizapp.commands.interview import grade_file

    grade_file(Path("sol.py"), exercise, None, Console(file=io.StringIO()))

    from quizapp.grading import warm
    from quizapp.tui.graders import WarmAppGrader
    from quizapp.tui.grading import GradeFinished

    posted = []
    try:
        with Store.open() as store:
            asyncio.run(WarmAppGrader(store).grade(Path("sol.py"), exercise, posted.append))
    finally:
        warm.shared().close()
    assert any(isinstance(m, GradeFinished) for m in posted), posted

    mine = str((tmp_path / "sol.py").resolve())
    assert [(path, file) for path, file, _ in stored()] == [(mine, mine)] * 4


def test_a_passing_grade_opens_the_store_once(tmp_path, monkeypatch):
    """Recorded, then the next exercise on the path read: both from the one opening."""
    solution = tmp_path / "schedule.py"
    solution.write_text((ROOT / "exercises" / EXERCISE / "reference.py").read_text())
    opened = []
    real_open = Store.open.__func__

    def counted(cls, path=None):
        opened.append(path)
        return real_open(cls, path)

    with monkeypatch.context() as patched:
        patched.setattr(Store, "open", classmethod(counted))
        result = CliRunner().invoke(cli, ["grade", str(solution)])
    assert result.exit_code == 0, result.output
    assert "Next on your path" in result.output
    assert len(opened) == 1
    assert [file for _, file, _ in stored()] == [str(solution.resolve())]
