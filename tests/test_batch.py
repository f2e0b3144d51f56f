"""`quizapp batch`: a class's folder read as students, graded in a pool of warm graders with one JSON
per student and a CSV, resumed, stopped by Ctrl+C, split into shards and merged, never writing the
teacher's progress, and each grade blind to the other students' files."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.catalog import load_catalog
from quizapp.checking.reaping import descendants, running
from quizapp.cli import cli
from quizapp.grading import contain
from quizapp.grading.batch import BatchError, find_submissions, merge, parse_shard, shard_of

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = "label_smoothing"
REFERENCE = ROOT / "exercises" / EXERCISE / "reference.py"
BUGGY = ROOT / "tests" / "grader" / "buggy" / EXERCISE / "c_minus_one.py"
MARKER = f"# quizapp: exercise={EXERCISE}\n"
no_bwrap = pytest.mark.skipif(contain.refused() is not None, reason=f"no kernel namespaces here: {contain.refused()}")


def batch(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quizapp", "batch", *args], capture_output=True, text=True,
                          timeout=timeout)


def solution(body: str) -> str:
    """A submission whose function raises what `body` found at import: its message carries the finding."""
    return MARKER + body + "\ndef label_smoothing_cross_entropy(*a, **k):\n    raise RuntimeError(f'FOUND {found}')\n"


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def zygote_grading(pid: int) -> bool:
    """`pid` is a warm grader's zygote with a grade in flight (its keeper is a child of the zygote)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"quizapp.checking.zygote" in argv and any(running(child) for child in descendants([pid]))


def found_in(result: dict) -> str:
    return result["checks"][0]["message"]


# -- the folder -----------------------------------------------------------------------------------

def test_each_layout_is_a_student_and_each_bad_entry_is_that_students_error(tmp_path):
    hw = tmp_path / "hw"
    hw.mkdir()
    (hw / "alice.py").write_text(MARKER)
    (hw / "bob").mkdir()
    (hw / "bob" / f"{EXERCISE}.py").write_text(MARKER)
    (hw / "bob" / "helper.py").write_text("")
    (hw / "carol").mkdir()
    (hw / "carol" / "mine.py").write_text(MARKER)
    (hw / "dave").mkdir()
    (hw / "dave" / "a.py").write_text("")
    (hw / "dave" / "b.py").write_text("")
    (hw / "erin").mkdir()
    (hw / "frank.ipynb").write_text("{}")
    (hw / "gina.py").symlink_to("/etc/hostname")
    (hw / "hal.py").symlink_to(hw / "alice.py")  # inside the folder: a file like any other
    (hw / "ivy.py").write_bytes(b"#" * 1_000_001)
    (hw / "jo.py").write_text(MARKER)
    (hw / "jo").mkdir()
    (hw / "jo" / f"{EXERCISE}.py").write_text(MARKER)
    (hw / ".DS_Store").write_text("")
    (hw / "__pycache__").mkdir()
    found = {s.student: s for s in find_submissions(hw, EXERCISE)}
    assert sorted(found) == ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "hal", "ivy", "jo"]
    assert found["alice"].path == hw / "alice.py" and found["alice"].problem is None
    assert found["bob"].path == hw / "bob" / f"{EXERCISE}.py"  # the exercise's name wins over other files
    assert found["carol"].path == hw / "carol" / "mine.py"  # the only .py
    assert found["hal"].path == hw / "hal.py"
    problems = {name: s.problem for name, s in found.items() if s.problem}
    assert set(problems) == {"dave", "erin", "frank", "gina", "ivy", "jo"}
    assert "2 Python files in dave/ (a.py, b.py)" in problems["dave"] and f"{EXERCISE}.py" in problems["dave"]
    assert problems["erin"] == f"no Python file in erin/: submit {EXERCISE}.py"
    assert "frank.ipynb is not a Python file" in problems["frank"]
    assert "symlink that leads out of the submissions folder" in problems["gina"]
    assert "1.0 MB, over the 1 MB" in problems["ivy"]
    assert problems["jo"] == "two submissions for jo: jo and jo.py; keep one"


def test_a_name_that_is_not_text_is_an_error_with_a_printable_name(tmp_path):
    hw = tmp_path / "hw"
    hw.mkdir()
    try:
        (hw / os.fsdecode(b"bad\xff.py")).write_text(MARKER)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    (sub,) = find_submissions(hw, EXERCISE)
    assert sub.path is None and "not valid text" in sub.problem
    assert sub.student.isprintable() and sub.student.isascii()


def test_shards_part_the_class_the_same_way_everywhere():
    names = [f"student{i:03d}" for i in range(200)]
    parts = [[n for n in names if shard_of(n, 4) == i] for i in range(4)]
    assert sorted(sum(parts, [])) == names  # each student in exactly one shard
    assert all(30 < len(p) < 70 for p in parts)  # and the shards are about even
    assert [shard_of(n, 4) for n in names] == [shard_of(n, 4) for n in names]
    assert parse_shard("3/4") == (3, 4)
    for bad in ("4/4", "-1/4", "1/0", "a/b", "1"):
        with pytest.raises(BatchError):
            parse_shard(bad)


def test_usage_errors_exit_2_with_one_line(tmp_path):
    hw = tmp_path / "hw"
    hw.mkdir()
    runner = CliRunner()
    cases = {
        ("batch", str(hw)): "--exercise ID",
        ("batch", str(hw), "--exercise", "nope"): "unknown exercise 'nope'",
        ("batch", str(tmp_path / "missing"), "--exercise", EXERCISE): "is not a folder of submissions",
        ("batch", str(hw), "--exercise", EXERCISE, "--out", str(hw / "out")): "inside the submissions folder",
        ("batch", str(hw), "--exercise", EXERCISE, "--shard", "4/4"): "I must be from 0 to N-1",
        ("batch", str(hw), str(hw), "--exercise", EXERCISE): "give one folder",
        ("batch", str(ROOT), "--exercise", EXERCISE): "which every grade needs",
        ("batch", "--merge", str(tmp_path / "missing")): "is not a folder of batch results",
    }
    for args, words in cases.items():
        result = runner.invoke(cli, list(args))
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output, (args, result.output)
        assert "Traceback" not in result.output


# -- grading --------------------------------------------------------------------------------------

@pytest.fixture
def grade_writable_off(monkeypatch):
    """The suite lets grades write its temp folders; a batch's submissions live there, and must stay hidden."""
    monkeypatch.delenv("QUIZAPP_GRADE_WRITABLE", raising=False)


def test_a_class_graded_resumed_and_regraded(tmp_path, quizapp_home, grade_writable_off):
    hw = tmp_path / "hw"
    hw.mkdir()
    (hw / "alice.py").write_bytes(REFERENCE.read_bytes())
    (hw / "bob.py").write_bytes(BUGGY.read_bytes())
    (hw / "carol").mkdir()
    out = tmp_path / "graded"
    first = batch(str(hw), "--exercise", EXERCISE, "--jobs", "2", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "3 students" in first.stderr and "3 submissions to grade, 0 graded already" in first.stderr
    assert "Passed: 1 of 3 students (33%)" in first.stdout
    alice = json.loads((out / "alice.json").read_text())
    assert alice["schema"] == 1 and alice["student"] == "alice" and alice["status"] == "pass"
    assert alice["file"] == "hw/alice.py" and len(alice["digest"]) == 64
    bob = json.loads((out / "bob.json").read_text())
    assert bob["status"] == "fail" and any(c["status"] == "fail" for c in bob["checks"])
    assert bob["review"], "the failed checks' questions are named, as grade --json names them"
    carol = json.loads((out / "carol.json").read_text())
    assert carol["status"] == "error" and carol["message"] == f"no Python file in carol/: submit {EXERCISE}.py"
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["student"] for r in rows] == ["alice", "bob", "carol"]
    check_ids = [c["id"] for c in alice["checks"]]
    assert list(rows[0])[:6] == ["student", "status", "checks_passed", "checks_total", "score", "duration_s"]
    assert list(rows[0])[6:] == check_ids
    assert rows[0]["score"] == "1.0" and rows[0]["checks_passed"] == rows[0]["checks_total"] == str(len(check_ids))
    assert rows[1]["status"] == "fail" and 0 < float(rows[1]["score"]) < 1
    assert rows[2]["status"] == "error" and rows[2]["checks_total"] == "0"
    assert not (quizapp_home / "progress.db").exists() and not any(quizapp_home.glob("*.db")), \
        "a batch never writes the teacher's progress store"

    # Rerun: nothing graded again but the error (it has no digest); a changed file is graded again.
    stamp = (out / "alice.json").stat().st_mtime_ns
    (hw / "bob.py").write_bytes(REFERENCE.read_bytes())
    second = batch(str(hw), "--exercise", EXERCISE, "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert "2 submissions to grade, 1 graded already (--regrade" in second.stderr
    assert (out / "alice.json").stat().st_mtime_ns == stamp
    assert json.loads((out / "bob.json").read_text())["status"] == "pass"
    third = batch(str(hw), "--exercise", EXERCISE, "--out", str(out), "--regrade", "--jobs", "1")
    assert "3 submissions to grade, 0 graded already" in third.stderr
    assert (out / "alice.json").stat().st_mtime_ns != stamp


@no_bwrap
def test_a_submission_sees_nothing_of_the_others(tmp_path, grade_writable_off):
    """The folder, the teacher's results, another worker's grade, what the previous grade left in
    /dev/shm and the processes it left running: none of them reach the next student's grade."""
    hw = tmp_path / "hw"
    hw.mkdir()
    out = tmp_path / "graded"
    (hw / "a_leaves.py").write_text(MARKER + (
        "import os, pathlib, subprocess\n"
        "pathlib.Path('/dev/shm/left-by-a').write_text('secret')\n"
        "subprocess.Popen(['sleep', '117'], start_new_session=True)\n"
        "def label_smoothing_cross_entropy(*a, **k):\n    raise RuntimeError('a was here')\n"))
    (hw / "b_looks.py").write_text(solution(
        "import glob, os, pathlib\n"
        f"names = os.listdir({str(hw)!r}) if os.path.isdir({str(hw)!r}) else []\n"
        f"results = glob.glob({str(out)!r} + '/*')\n"
        "others = glob.glob('/tmp/quizapp-batch-*/*/*/*/solution/*')\n"
        "shm = os.listdir('/dev/shm')\n"
        "procs = [p for p in glob.glob('/proc/[0-9]*/cmdline') if b'sleep\\x00117' in pathlib.Path(p).read_bytes()]\n"
        "found = dict(names=names, results=results, others=others, shm=shm, procs=procs)\n"))
    (hw / "c_neighbour.py").write_bytes(REFERENCE.read_bytes())
    done = batch(str(hw), "--exercise", EXERCISE, "--jobs", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "reads confined" in done.stderr
    seen = found_in(json.loads((out / "b_looks.json").read_text()))
    assert "FOUND {" in seen, seen
    assert "a_leaves" not in seen and "c_neighbour" not in seen and "secret" not in seen, seen
    assert "'shm': []" in seen and "'procs': []" in seen and "'results': []" in seen, seen
    assert "'names': []" in seen, seen
    assert json.loads((out / "c_neighbour.json").read_text())["status"] == "pass"


def test_ctrl_c_keeps_what_was_graded_and_leaves_no_process(tmp_path, grade_writable_off):
    hw = tmp_path / "hw"
    hw.mkdir()
    (hw / "a_quick.py").write_bytes(REFERENCE.read_bytes())
    for name in ("b_slow", "c_slow", "d_slow"):
        (hw / f"{name}.py").write_text(MARKER + "import time\ntime.sleep(60)\n")
    out = tmp_path / "graded"
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "batch", str(hw), "--exercise", EXERCISE,
                             "--jobs", "1", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert until(lambda: (out / "a_quick.json").exists() or proc.poll() is not None, 120)
    assert (out / "a_quick.json").exists(), "the first student was graded"
    assert until(lambda: any(zygote_grading(pid) for pid in descendants([proc.pid])), 60), \
        "the next student's grade is running (its solution sleeping)"
    ours = descendants([proc.pid])
    os.kill(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert "stopped; 1 student graded, 3 left. Run the same command again to go on." in stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["a_quick.json"], "a grade cut short is not written"
    assert [r["student"] for r in csv.DictReader((out / "results.csv").open())] == ["a_quick"]
    assert until(lambda: not any(running(pid) for pid in ours), 10), \
        f"processes of the batch still running: {[pid for pid in ours if running(pid)]}"


def test_shards_then_merge_make_one_table(tmp_path):
    hw = tmp_path / "hw"
    hw.mkdir()
    names = [f"s{i}" for i in range(8)]
    for name in names:  # folders with no Python file: every student an error, written without grading
        (hw / name).mkdir()
    outs = []
    for index in range(3):
        out = tmp_path / f"shard{index}"
        result = CliRunner().invoke(cli, ["batch", str(hw), "--exercise", EXERCISE, "--shard", f"{index}/3",
                                          "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert f"shard {index}/3:" in result.output
        assert (out / f"results-shard-{index}-of-3.csv").exists()
        outs.append(out)
    merged = tmp_path / "all.csv"
    result = CliRunner().invoke(cli, ["batch", "--merge", *map(str, outs), "--csv", str(merged)])
    assert result.exit_code == 0, result.output
    assert f"Merged 8 students from 3 folders into {merged}" in result.output
    assert [r["student"] for r in csv.DictReader(merged.open())] == names
    results, warnings = merge(outs + [outs[0]])
    assert len(results) == 8 and len(warnings) == sum(1 for n in names if shard_of(n, 3) == 0)


def test_the_exercise_exists_for_the_fixture():
    assert EXERCISE in load_catalog()
