"""Every debugging drill as the learner meets it: a whole script that runs with `python FILE`, names
the public report its bug comes from, and prints its symptom; the fixed script runs too. The drills'
grading (starter fails its symptom, cosmetic fixes named, rewrites pass) is tested by
tests/grader/test_mutants.py, from the headers of each drill's buggy solutions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quizapp.catalog import drills_only, exercises_only, load_catalog
from quizapp.grading.selfcheck import SOURCE

CATALOG = load_catalog()
DRILLS = drills_only(CATALOG)
MIN_DRILLS = 12

# Runs each script as `python FILE` would (run_name "__main__"), all in one interpreter so that torch
# loads once; prints {path: [exit status, output]}. A script must not need quizapp: only torch. One
# OpenMP thread: a script that forks its DDP ranks after an earlier script started OpenMP's thread
# pool would hang in the fork (run alone, as a learner runs it, it starts from a fresh process).
# "SCRIPT::FIX" runs SCRIPT with the functions of the file FIX in place of its own: the script as a
# learner who made that fix runs it.
_RUN_SCRIPTS = textwrap.dedent("""
    import contextlib, io, json, runpy, sys, traceback
    out = {}
    for path in sys.argv[1:]:
        script, _, fix = path.partition("::")
        buf = io.StringIO()
        status = 0
        try:
            with contextlib.redirect_stdout(buf):
                if fix:
                    main = runpy.run_path(script, run_name="drill_script")["main"]
                    exec(compile(open(fix).read(), fix, "exec"), main.__globals__)
                    main()
                else:
                    runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            status = exc.code or 0
        except BaseException:
            status = 1
            buf.write(traceback.format_exc())
        out[path] = [status, buf.getvalue()]
    sys.stdout.write(json.dumps(out))
""")


BUGGY = Path(__file__).resolve().parent / "grader" / "buggy"
# Drills whose right fixes written another way (tests/grader/buggy/<drill>/ok_*.py, which the drill's grader
# tests pass) are run here as the learner runs the fixed script: a fix the grade accepts must not still print
# the symptom. Each prints the fixed script's log exactly (other drills' rewrites print other rounding or
# log less, so theirs is not compared).
FIXES_PRINT_THE_FIXED_LOG = ["debug_eval_mode"]
ACCEPTED_FIXES = [fix for drill_id in FIXES_PRINT_THE_FIXED_LOG for fix in sorted((BUGGY / drill_id).glob("ok_*.py"))]


def fixed_script(fix: Path) -> str:
    return f"{DRILLS[fix.parent.name].folder / 'starter.py'}::{fix}"


@pytest.fixture(scope="module")
def script_runs() -> dict:
    paths = [str(ex.folder / name) for ex in DRILLS.values() for name in ("starter.py", "reference.py")]
    paths += [fixed_script(fix) for fix in ACCEPTED_FIXES]
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPTS, *paths], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_there_are_enough_drills_and_they_are_apart_from_the_exercises():
    assert len(DRILLS) >= MIN_DRILLS, sorted(DRILLS)
    assert all(ex.id.startswith("debug_") for ex in DRILLS.values())
    assert set(DRILLS).isdisjoint(exercises_only(CATALOG))


@pytest.mark.parametrize("drill_id", sorted(DRILLS))
def test_a_drill_names_its_source_everywhere_the_learner_looks(drill_id):
    drill = DRILLS[drill_id]
    assert SOURCE.match(drill.source), drill.source
    where = drill.source.split(":", 1)[0]
    starter = drill.starter.read_text(encoding="utf-8")
    assert where in drill.statement and where in starter
    assert drill.symptom and drill.title.startswith("Drill: ")
    assert starter.splitlines()[0] == f"# quizapp: exercise={drill_id}"
    assert f"python {drill_id}.py" in starter and f"quizapp grade {drill_id}.py" in starter
    assert not re.search(r"^\s*(import|from)\s+quizapp", starter, re.M), "a drill script stands alone"
    assert len(drill.hints) >= 3


@pytest.mark.parametrize("drill_id", sorted(DRILLS))
def test_the_broken_and_the_fixed_script_both_run(drill_id, script_runs):
    for name in ("starter.py", "reference.py"):
        status, output = script_runs[str(DRILLS[drill_id].folder / name)]
        assert status == 0, f"{name}: {output[-2000:]}"
        assert output.strip(), f"{name} prints nothing: a drill's script shows its training log"
    broken = script_runs[str(DRILLS[drill_id].folder / "starter.py")][1]
    fixed = script_runs[str(DRILLS[drill_id].folder / "reference.py")][1]
    assert broken != fixed, "the broken script prints the same log as the fixed one: the symptom does not show"


@pytest.mark.parametrize("fix", ACCEPTED_FIXES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_fix_the_grader_accepts_prints_no_symptom(fix, script_runs):
    status, output = script_runs[fixed_script(fix)]
    assert status == 0, output[-2000:]
    fixed = script_runs[str(DRILLS[fix.parent.name].folder / "reference.py")][1]
    assert output == fixed, f"the script with this fix prints:\n{output}\nthe fixed script:\n{fixed}"


def test_list_and_stats_show_the_drills_in_their_own_tables(monkeypatch):
    from click.testing import CliRunner

    from quizapp.cli import cli

    monkeypatch.setenv("COLUMNS", "200")
    listed = CliRunner().invoke(cli, ["list"], catch_exceptions=False).output
    exercises_part, _, drills_part = listed.partition("Debugging drills")
    assert drills_part and all(d in drills_part for d in DRILLS)
    assert not any(d in exercises_part for d in DRILLS)
    assert DRILLS["debug_log_softmax"].symptom in drills_part
    stats = CliRunner().invoke(cli, ["stats"], catch_exceptions=False).output
    # Other tests may have graded drills in this session's store: the count of passes is not asked.
    assert re.search(rf"Drills passed: \d+/{len(DRILLS)}", stats) and "Debugging drills" in stats


def test_start_says_how_to_see_the_bug(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from quizapp.cli import cli

    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["start", "debug_log_softmax"], catch_exceptions=False).output
    assert "See the bug:    python debug_log_softmax.py   (the loss is inf at step 1" in out
    assert (tmp_path / "debug_log_softmax.py").read_text() == DRILLS["debug_log_softmax"].starter.read_text()
