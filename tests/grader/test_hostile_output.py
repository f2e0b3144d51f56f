"""Issue 23, honest situations that went wrong: terminal control sequences in what a solution prints
or raises, a check message of megabytes, and sys.exit() with a code that cannot be shown."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from gradeutil import grade_many
from rich.console import Console
from warmutil import grade_warm_many

from quizapp.catalog import load_catalog
from quizapp.checking.protocol import MESSAGE_CAP
from quizapp.grading.render import print_report
from quizapp.grading.result import SHOWN_CAP, CheckResult, GradeReport, printable, shown_messages

HOSTILE = Path(__file__).parent / "hostile"
CONTROL = [chr(c) for c in range(32) if chr(c) not in "\n\t"] + ["\x7f", "\x9b", "\u202e"]


def has_control(text: str) -> bool:
    return any(c in text for c in CONTROL)


@pytest.fixture(scope="module", params=["cold", "warm"])
def graded(request):
    names = ["terminal_escapes", "huge_message", "control_flood", "forged_inputs", "exit_code_bad_repr",
             "exit_code_bad_repr_at_import"]
    results = (grade_many if request.param == "cold" else grade_warm_many)([(str(HOSTILE / f"{n}.py"),) for n in names])
    return dict(zip(names, results))


def test_the_human_report_prints_no_control_sequence():
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(HOSTILE / "terminal_escapes.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert not has_control(out.stdout), repr(out.stdout)
    assert "\\x1b[2J" in out.stdout  # shown, escaped: the learner sees what was printed


def test_messages_carry_no_control_sequence(graded):
    report = graded["terminal_escapes"].report
    assert report["checks"] and all(not has_control(c["message"]) for c in report["checks"])


def test_render_escapes_what_it_prints():
    checks = [CheckResult("a", "A\x1b[2J", "error", "ValueError: \x1b]0;t\x07\x1b[32mPASSED\x9b2J")]
    report = GradeReport("x", "x\x1b[1m.py", "fail", None, "cpu", "2", 1.0, checks, output="\x1b[2J\x1b[Hhi\r\n")
    buffer = StringIO()
    print_report(report, console=Console(file=buffer, width=200, force_terminal=False, color_system=None))
    assert not has_control(buffer.getvalue()) and "\\x1b[2J" in buffer.getvalue()
    assert all(not has_control(m) for m in shown_messages(checks))  # what the TUI shows


def test_printable_keeps_text_and_escapes_controls():
    assert printable("line one\n\tindented — ünïcode ✔") == "line one\n\tindented — ünïcode ✔"
    assert printable("\x1b[2J\x07\x9b\u202e") == "\\x1b[2J\\x07\\x9b\\u202e"


def test_a_huge_message_is_cut_and_says_so(graded):
    result = graded["huge_message"]
    assert result.code == 1 and result.report["status"] == "fail"
    failing = [c for c in result.report["checks"] if c["status"] != "pass"]  # a ValueError passes "validation"
    assert len(failing) >= 5
    for check in failing:
        assert len(check["message"]) <= SHOWN_CAP and "(cut: " in check["message"], len(check["message"])
    assert len(json.dumps(result.report)) < 20 * (MESSAGE_CAP + 200)


def test_only_the_grader_names_the_inputs_an_error_came_from(graded):
    failing = [c for c in graded["forged_inputs"].report["checks"] if c["status"] != "pass"]
    assert failing and any("Forged: boom" in c["message"] for c in failing)
    assert all("it is correct" not in c["message"] for c in failing), [c["message"] for c in failing]
    assert any(c["message"].startswith("with ") for c in failing)  # the grader's own prefix is still there


def test_a_message_of_control_characters_keeps_the_cap_once_escaped(graded):
    """Each control character is escaped as four (\\x1b): the cap is on what is shown, not on what was raised."""
    failing = [c for c in graded["control_flood"].report["checks"] if c["status"] != "pass"]
    assert failing
    for check in failing:
        assert len(check["message"]) <= SHOWN_CAP and "\\x1b" in check["message"] and not has_control(check["message"])


def test_a_huge_message_is_cut_on_screen_and_in_the_store(quizapp_home):
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(HOSTILE / "huge_message.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and len(out.stdout) < 200_000 and "(cut: " in out.stdout.replace("\n", "")
    from quizapp.study.store import Store

    with Store.open() as store:
        (record,) = store.grades()
    assert len(json.dumps(record._asdict(), default=str)) < 200_000


def test_exit_with_a_code_that_cannot_be_shown_is_reported_per_check(graded):
    result = graded["exit_code_bad_repr"]
    assert result.code == 1 and result.report["status"] == "fail", result.report
    checks = result.report["checks"]
    # every check of the exercise (label_smoothing) is reported, each as the solution's error
    assert len(checks) == len(load_catalog()["label_smoothing"].questions) and {c["status"] for c in checks} == {"error"}
    assert all("internal grader error" not in c["message"] for c in checks)
    assert "sys.exit(" in checks[0]["message"] and "could not be shown" in checks[0]["message"]


def test_exit_at_import_with_a_code_that_cannot_be_shown(graded):
    result = graded["exit_code_bad_repr_at_import"]
    assert result.code == 1 and result.report["status"] == "error"
    assert "internal grader error" not in result.report["message"] and "sys.exit(" in result.report["message"]
