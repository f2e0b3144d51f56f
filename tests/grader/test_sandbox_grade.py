"""The sandbox in a real grade, cold and warm: a solution cannot write the store or the installed
checks, print on the grader's stdout, signal the grader or connect out, and the report says which
protection was in force. A grade whose grader is killed does not outlive it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gradeutil import exercise_record

from quizapp.checking import sandbox
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).parent / "hostile" / "sandbox_escape.py"

needs_landlock = pytest.mark.skipif(sandbox.landlock_abi()[0] < 6, reason="this kernel has no Landlock ABI 6 (signals)")


@pytest.fixture
def exercise_copy(tmp_path) -> Path:
    """A copy of label_smoothing, so that a failed defence would show in a file of the test's own."""
    folder = tmp_path / "exercises" / "label_smoothing"
    shutil.copytree(ROOT / "exercises" / "label_smoothing", folder)
    return folder


@needs_landlock
@pytest.mark.parametrize("way", ["cold", "warm"])
def test_a_solution_cannot_reach_outside_its_grade(way, exercise_copy, quizapp_home, tmp_path, monkeypatch):
    from quizapp.study.store import Store

    monkeypatch.delenv("QUIZAPP_GRADE_WRITABLE", raising=False)  # the sandbox as a learner has it
    Store.open().close()  # the learner's store exists
    store_file = quizapp_home / "progress.sqlite3"
    before = store_file.read_bytes(), (exercise_copy / "checks.py").read_bytes()
    warm = WarmGrader() if way == "warm" else None
    try:
        report = grade(HOSTILE, exercise_record(exercise_copy, "label_smoothing"), warm=warm)
    finally:
        if warm is not None:
            warm.close()
    printed = report.output
    for what in ("store", "checks", "grader stdout", "signal", "network"):
        assert f"DENIED {what}" in printed, printed
    assert "ALLOWED own folder" in printed
    assert (store_file.read_bytes(), (exercise_copy / "checks.py").read_bytes()) == before
    assert report.sandbox and "Landlock" in report.sandbox and "no network" in report.sandbox
    assert report.to_json()["sandbox"] == report.sandbox


def test_grade_json_says_which_protection_was_in_force(tmp_path):
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(ROOT / "exercises" / "lora" / "reference.py"),
                          "--json"], capture_output=True, text=True, timeout=600)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["status"] == "pass"
    expected = "Landlock" if sandbox.landlock_abi()[0] >= 1 else "none"
    assert expected in report["sandbox"]


LOOP = """# quizapp: exercise=label_smoothing
import time
while True:
    time.sleep(0.05)
def label_smoothing_loss(logits, target, smoothing=0.1, ignore_index=-100):
    pass
"""


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def ignore_hangup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup, or a runner that ignores SIGHUP


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig, inherited", [(signal.SIGKILL, None), (signal.SIGHUP, None),
                                            (signal.SIGHUP, ignore_hangup)],
                         ids=["killed", "hangup", "hangup-under-nohup"])
def test_a_solution_dies_with_its_killed_grader(sig, inherited, tmp_path):
    """The grading process killed (or its terminal closed): the solution goes too, not on for ever. A
    hangup stops the grade even when whoever started the grader ignored SIGHUP (nohup, some CI runners)."""
    solution = tmp_path / "loop.py"
    solution.write_text(LOOP)
    temp = tmp_path / "temp"  # where the grader makes the grade's folder
    temp.mkdir()
    grader = subprocess.Popen([sys.executable, "-m", "quizapp", "grade", str(solution), "--timeout", "300"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              preexec_fn=inherited, env={**os.environ, "TMPDIR": str(temp)})
    try:
        # Every wait below ends on an event (the solution seen, the grader gone, the solution gone); the
        # deadlines only bound a broken run, sized for a loaded 2-core machine.
        deadline = time.monotonic() + 240
        solution_pids: set[int] = set()
        while time.monotonic() < deadline and not solution_pids:
            solution_pids = {pid for pid in descendants(grader.pid)
                             if b"quizapp.checking.entry" in Path(f"/proc/{pid}/cmdline").read_bytes()}
            time.sleep(0.2)
        assert solution_pids, "the solution never started"
        os.kill(grader.pid, sig)
        grader.wait(timeout=240)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and any(alive(pid) for pid in solution_pids):
            time.sleep(0.2)
        assert not any(alive(pid) for pid in solution_pids)
        if sig == signal.SIGHUP:  # a hangup is a clean stop: the grader says so, and leaves no folder behind
            assert grader.returncode == 1
            assert list(temp.iterdir()) == []
    finally:
        for pid in descendants(grader.pid) | {grader.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@needs_landlock
def test_a_warm_grade_writes_its_temp_files_in_its_own_folder(monkeypatch):
    """The zygote's tempfile module read TMPDIR before the fork: a warm DDP grade (its launcher makes a
    temp folder) must use the grade's own temp folder, the one its sandbox lets it write."""
    monkeypatch.delenv("QUIZAPP_GRADE_WRITABLE", raising=False)
    warm = WarmGrader()
    try:
        report = grade(ROOT / "exercises" / "ddp_accumulation" / "reference.py",
                       exercise_record(ROOT / "exercises" / "ddp_accumulation"), warm=warm)
    finally:
        warm.close()
    assert report.status == "pass", [(c.id, c.message) for c in report.checks if c.status != "pass"]
