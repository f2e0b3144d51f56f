"""`quizapp watch`: a grade at start, another after each save (atomic saves too), one JSON line each
with --json-lines, a summary of what changed, and Ctrl+C ends it with no process left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from quizapp.cli import cli
from quizapp.grading.saves import change_summary

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "exercises" / "warmup_cosine" / "reference.py").read_text()
BUGGY = REFERENCE.replace("math.cos(math.pi * progress)", "math.cos(math.pi * progress * 0.5)")


def test_change_summary_counts_newly_passing_and_failing_checks():
    was = {"a": "fail", "b": "error", "c": "pass", "d": "skip"}
    assert change_summary(was, {"a": "pass", "b": "pass", "c": "fail", "d": "skip"}) == \
        "2 checks newly pass, 1 newly fails."
    assert change_summary(was, {"a": "pass", "b": "error", "c": "pass", "d": "skip"}) == "1 check newly passes."
    assert change_summary(was, {"a": "fail", "b": "error", "c": "error", "d": "fail"}) == "2 checks newly fail."
    assert change_summary(was, dict(was)) == "No check changed since the last grade."


def test_usage_errors_exit_2(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["watch", str(tmp_path / "missing.py")])
    assert result.exit_code == 2 and "no such file" in result.output
    unmarked = tmp_path / "unmarked.py"
    unmarked.write_text("import torch\n")
    result = runner.invoke(cli, ["watch", str(unmarked)])
    assert result.exit_code == 2 and "--exercise" in result.output


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, found through /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), ()):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def next_line(proc: subprocess.Popen, timeout: float) -> dict:
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout), "no grade came"
        return json.loads(proc.stdout.readline())


def test_watch_regrades_on_every_save_and_ctrl_c_leaves_no_process(tmp_path):
    solution = tmp_path / "sched.py"
    solution.write_text(REFERENCE)
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", str(solution), "--json-lines"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        first = next_line(proc, 240)
        assert first["schema"] == 1 and first["status"] == "pass" and first["file"] == str(solution)
        # An atomic save, as many editors do it: a new file renamed over the old one. A bug in it.
        draft = tmp_path / ".sched.py.swp"
        assert BUGGY != REFERENCE
        draft.write_text(BUGGY)
        os.replace(draft, solution)
        second = next_line(proc, 120)
        assert second["status"] == "fail"
        # A plain save in place, fixed again.
        solution.write_text(REFERENCE + "\n# fixed\n")
        third = next_line(proc, 120)
        assert third["status"] == "pass"
        below = descendants(proc.pid)
        assert below, "the zygote runs below the watch"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err and "Stopped watching" in err
    assert out == ""  # nothing after the last grade's line
    time.sleep(0.3)
    assert not [p for p in below if alive(p)]
    from quizapp.study.store import Store

    with Store.open() as store:
        assert [g.status for g in store.grades("warmup_cosine")] == ["pass", "fail", "pass"]


def test_ctrl_c_during_a_grade_stops_it(tmp_path):
    looper = tmp_path / "looper.py"
    pid_file = tmp_path / "pid"
    looper.write_text("# quizapp: exercise=warmup_cosine\nimport os\n"
                      f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    pass\n")
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", str(looper), "--json-lines"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 240
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    below = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == "" and "Traceback" not in err
    time.sleep(0.3)
    assert not alive(int(pid_file.read_text()))
    assert not [p for p in below if alive(p)]


def test_in_a_terminal_h_shows_the_next_hint_and_q_quits(tmp_path):
    import pty

    solution = tmp_path / "sched.py"
    solution.write_text(BUGGY)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.execv(sys.executable, [sys.executable, "-m", "quizapp", "watch", str(solution)])
    seen = b""

    def wait_for(needle: bytes, timeout: float) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while needle not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")[-2000:]
            import select

            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break

    try:
        wait_for(b"h: next hint", 240)
        assert b"NOT YET" in seen
        os.write(fd, b"h")
        wait_for(b"Hint 1/", 30)
        wait_for(b"(next: press h)", 30)  # the key that does it here, not a command to type elsewhere
        assert b"next: quizapp hint" not in seen
        os.write(fd, b"q")
        _, status = os.waitpid(pid, 0)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert os.waitstatus_to_exitcode(status) == 0
