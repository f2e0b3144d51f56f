"""The command line: bank check, list, stats, and what starting it costs."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner
from test_bank_validation import GOOD

from quizapp.cli import cli
from quizapp.study.schedule import record_review
from quizapp.study.store import Store


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_bank_check_passes_on_the_shipped_bank():
    result = run("bank", "check")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok:")


def test_bank_check_lists_every_error_and_exits_1(write_pack):
    bad = write_pack(GOOD.replace("answer: 2\n", "answer: 5\n").replace("type: card", "type: essay"), "bad.yaml")
    empty = write_pack("", "empty.yaml")
    result = run("bank", "check", str(bad.parent))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert f"{bad}:9: question 'demo-single': answer 5 is out of range: there are 3 choices (0 to 2)" in lines
    assert any(line.startswith(f"{bad}:38: ") for line in lines)
    assert f"{empty}:1: empty file: expected the keys topic, title and questions" in lines
    assert "3 errors in 2 of 2 files" in result.stderr


def test_bank_check_of_a_missing_path(tmp_path):
    result = run("bank", "check", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 1
    assert f"{tmp_path / 'nope.yaml'}:1: no such file" in result.stdout


def test_list_shows_topics_with_counts():
    result = run("list")
    assert result.exit_code == 0, result.output
    assert "Question topics" in result.output


def test_stats_shows_progress(write_pack, quizapp_home):
    write_pack(GOOD, "mine.yaml", quizapp_home / "questions")
    from quizapp.bank import load_bank

    bank = load_bank()
    with Store.open() as store:
        record_review(store, bank.questions["demo-single"], rating=3, correct=True)
    result = run("stats")
    assert result.exit_code == 0, result.output
    assert "Streak: 1 day" in result.output
    assert "Demo topic" in result.output and "1/6" in result.output


def test_stats_on_a_corrupt_database_says_where_and_exits_nonzero(quizapp_home):
    quizapp_home.mkdir(parents=True)
    db = quizapp_home / "progress.sqlite3"
    db.write_bytes(b"garbage" * 1000)
    result = run("stats")
    assert result.exit_code == 1
    assert "corrupt" in result.stderr and str(db) in result.stderr
    assert db.read_bytes() == b"garbage" * 1000


def test_broken_user_pack_is_reported_but_the_bank_still_loads(write_pack, quizapp_home):
    write_pack("topic: [oops\n", "broken.yaml", quizapp_home / "questions")
    result = run("list")
    assert result.exit_code == 0
    assert "broken.yaml:" in result.stderr and "YAML syntax error" in result.stderr
    assert "Question topics" in result.stdout


PROBE = """
import sys, runpy
sys.argv = {argv!r}
try:
    runpy.run_module("quizapp", run_name="__main__")
except SystemExit:
    pass
heavy = sorted(m for m in ("torch", "textual", "fsrs", "rich") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def modules_loaded_by(*argv):
    code = PROBE.format(argv=["quizapp", *argv])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ})
    line = [text for text in out.stderr.splitlines() if text.startswith("HEAVY=")][-1]
    return set(filter(None, line[len("HEAVY="):].split(",")))


def test_help_imports_neither_torch_nor_textual():
    assert modules_loaded_by("--help") == set()


def test_bank_check_imports_neither_torch_nor_textual():
    loaded = modules_loaded_by("bank", "check")
    assert "torch" not in loaded and "textual" not in loaded


def test_python_dash_m_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "quizapp", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "quizapp, version" in out.stdout


ENTRY = """
import sys
import quizapp.tui_launch
quizapp.tui_launch.launch = lambda: print("app", "click" in sys.modules) or 7
sys.argv = ["quizapp", *{args!r}]
from quizapp.main import main
main()
"""


def test_bare_quizapp_opens_the_app_without_loading_the_parser():
    result = subprocess.run([sys.executable, "-c", ENTRY.format(args=[])], capture_output=True, text=True, timeout=60)
    assert result.returncode == 7 and result.stdout == "app False\n", result.stderr


def test_quizapp_with_arguments_goes_through_the_command_line():
    result = subprocess.run([sys.executable, "-c", ENTRY.format(args=["--version"])], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("quizapp, version"), result.stderr


def test_list_fits_60_columns_and_never_cuts_an_id():
    """At 60 columns every line fits, and every topic slug and exercise id a learner types is whole."""
    from quizapp.catalog import load_catalog

    result = CliRunner().invoke(cli, ["list"], env={"COLUMNS": "60"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 60, [line for line in lines if len(line.rstrip()) > 60]
    words = set(result.output.split())
    assert set(load_catalog()) <= words
    assert "mixed-precision" in words and "activation-memory" in words
