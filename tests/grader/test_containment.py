"""What a grade leaves outside its folder: nothing, cold or warm. Metadata (chmod, utime) of files
outside the grade, /dev/shm, and processes that leave the session, against the kernel's containment
(bubblewrap) where it is in force and the private copy and the sweep where it is not."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest
from gradeutil import exercise_record

from quizapp.checking import sandbox
from quizapp.grading import contain
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).parent / "hostile" / "metadata_outside.py"
LABEL_SMOOTHING = ROOT / "exercises" / "label_smoothing"

needs_bwrap = pytest.mark.skipif(contain.refused() is not None, reason=f"no containment here: {contain.refused()}")
needs_landlock = pytest.mark.skipif(sandbox.landlock_abi()[0] < 1, reason="no Landlock here")


def sleepers(mark: str) -> list[int]:
    """Processes anywhere on the machine whose command line carries `mark`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if mark.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


@pytest.fixture
def hostile(tmp_path, quizapp_home, monkeypatch):
    """The hostile solution in a folder of the learner's (outside every folder a grade may write)."""
    monkeypatch.delenv("QUIZAPP_GRADE_WRITABLE", raising=False)  # the sandbox as a learner has it
    quizapp_home.mkdir(parents=True, exist_ok=True)
    learner = tmp_path / "project" / "label_smoothing.py"
    learner.parent.mkdir()
    learner.write_text(HOSTILE.read_text())
    os.utime(learner, (1_000_000, 1_000_000))
    mark = str(secrets.randbelow(10**9)).rjust(9, "0")
    monkeypatch.setenv("HOSTILE_LEARNER_FILE", str(learner))
    monkeypatch.setenv("HOSTILE_MARK", mark)
    yield learner, mark
    for pid in sleepers(f"299.{mark}"):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    Path("/dev/shm", f"quizapp-hostile-{mark}").unlink(missing_ok=True)
    learner.chmod(0o644)
    quizapp_home.chmod(0o755)


def run(learner: Path, way: str, monkeypatch):
    if way == "landlock-only":
        monkeypatch.setenv(contain.OFF_ENV, "1")
    warm = WarmGrader() if way == "warm" else None
    try:
        return grade(learner, exercise_record(LABEL_SMOOTHING), warm=warm)
    finally:
        if warm is not None:
            warm.close()


@needs_landlock
@pytest.mark.parametrize("way", ["cold", "landlock-only", "warm"])
def test_a_solution_never_spoils_its_own_file_for_the_next_grade(way, hostile, quizapp_home, monkeypatch):
    if way == "cold" and contain.refused() is not None:
        pytest.skip(f"no containment here: {contain.refused()}")
    learner, mark = hostile
    monkeypatch.setenv("HOSTILE_LEARNER_FILE", "")  # only what an honest mistake does: its own __file__
    report = run(learner, way, monkeypatch)
    assert "ALLOWED chmod own file" in report.output, (report.status, report.message)  # its own file is the private copy
    assert os.access(learner, os.R_OK) and learner.stat().st_mode & 0o777 == 0o644
    assert report.status == "fail"
    again = grade(learner, exercise_record(LABEL_SMOOTHING))  # the next grade can read it
    assert again.status == "fail" and "ALLOWED chmod own file" in again.output, again.message


@needs_bwrap
@pytest.mark.parametrize("way", ["cold", "warm"])
def test_a_contained_grade_changes_nothing_outside_its_folder(way, hostile, quizapp_home, monkeypatch):
    learner, mark = hostile
    before = learner.stat().st_mtime_ns, quizapp_home.stat().st_mode
    report = run(learner, way, monkeypatch)
    for what in ("chmod learner file", "utime learner file", "chmod progress folder"):
        assert f"DENIED {what}" in report.output, report.output
    assert (learner.stat().st_mtime_ns, quizapp_home.stat().st_mode) == before
    assert "ALLOWED shm" in report.output and not Path("/dev/shm", f"quizapp-hostile-{mark}").exists()
    assert report.sandbox.startswith("sandbox: bubblewrap (") and "Landlock" in report.sandbox
    # A cold grade has a PID namespace of its own; a warm one shares its zygote's (its keeper sweeps).
    assert ("own processes" in report.sandbox) == (way == "cold")


@needs_landlock
@pytest.mark.parametrize("way", ["cold", "landlock-only", "warm"])
def test_no_process_of_a_grade_outlives_it(way, hostile, monkeypatch):
    if way == "cold" and contain.refused() is not None:
        pytest.skip(f"no containment here: {contain.refused()}")
    learner, mark = hostile
    run(learner, way, monkeypatch)
    deadline = time.monotonic() + 30  # the sweep is done when grade() returns; this only bounds a broken run
    while sleepers(f"299.{mark}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sleepers(f"299.{mark}") == []


@pytest.mark.parametrize("way", ["landlock-only", "warm-landlock-only"])
def test_the_report_says_why_there_were_no_namespaces(way, hostile, monkeypatch):
    learner, _ = hostile
    if way == "warm-landlock-only":
        monkeypatch.setenv(contain.OFF_ENV, "1")
    report = run(learner, way.removeprefix("warm-") if way == "landlock-only" else "warm", monkeypatch)
    assert f"no kernel namespaces ({'a warm grade: ' if way.startswith('warm') else ''}turned off by" in report.sandbox


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process count is read from /proc")
@pytest.mark.parametrize("way", ["cold", "warm"])
def test_a_grade_cannot_write_a_huge_file_or_start_processes_without_end(way, monkeypatch):
    from quizapp.checking.entry import FILE_SIZE_CAP, PROCESSES_ABOVE_NOW

    report = run(Path(__file__).parent / "hostile" / "big_file.py", way, monkeypatch)
    assert FILE_SIZE_CAP == 1 << 30
    assert "DENIED past the cap: File too large" in report.output, report.output
    nproc = int(report.output.split("NPROC ", 1)[1].split()[0])
    # Finite, and the user's count plus the margin (which moves while other programs start and end).
    assert PROCESSES_ABOVE_NOW < nproc <= len(list(Path("/proc").glob("[0-9]*"))) + PROCESSES_ABOVE_NOW + 2000


def test_a_save_is_a_change_of_content_never_of_time(tmp_path):
    """`watch` and the app regrade on a save; a solution that touches its file (os.utime) at every grade
    made them regrade for ever when a save was told by its time."""
    from quizapp.grading.saves import file_state

    path = tmp_path / "solution.py"
    path.write_text("x = 1\n")
    first = file_state(path)
    os.utime(path, (1, 1))
    path.chmod(0o644)
    assert file_state(path) == first
    path.write_text("x = 2\n")
    assert file_state(path) != first
    path.unlink()
    assert file_state(path) is None


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the memory held is read from /proc")
@pytest.mark.parametrize("way", ["cold", "landlock-only", "warm"])
def test_processes_a_grade_starts_share_its_memory(way, monkeypatch):
    """Each process's address space is capped on its own; the grade's processes together are held to
    the same figure, so that starting processes does not multiply it."""
    started = time.monotonic()
    if way == "landlock-only":
        monkeypatch.setenv(contain.OFF_ENV, "1")
    warm = WarmGrader() if way == "warm" else None
    try:
        report = grade(Path(__file__).parent / "hostile" / "memory_in_children.py", exercise_record(LABEL_SMOOTHING),
                       warm=warm, memory_mb=1500, timeout=100)
    finally:
        if warm is not None:
            warm.close()
    assert report.status == "error", report.message
    assert "the grade's processes together held" in report.message and "more than the 1,500 MB" in report.message
    assert time.monotonic() - started < 90  # stopped for its memory, long before its children's sleep ends
