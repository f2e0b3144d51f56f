"""The progress store shared by several live processes: two apps, the CLI and `watch` side by side.

Each writer's rows are visible to the others while all stay open, the WAL outlives every process but
the last, the file passes `integrity_check`, and SIGKILL of any one writer loses nothing it committed.
These run real processes on one QUIZAPP_HOME, as a learner with the app in one terminal and the CLI in
another does.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from quizapp.study.store import Store, StoreFailed

ROOT = Path(__file__).resolve().parent.parent
LIVE_APP = Path(__file__).parent / "live_app.py"
REFERENCE = ROOT / "exercises" / "label_smoothing" / "reference.py"


class LiveApp:
    """A running app (tests/live_app.py) that answers one JSON line per command."""

    def __init__(self, home: Path):
        self.proc = subprocess.Popen([sys.executable, str(LIVE_APP)], env=env_for(home), cwd=home.parent,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.read() == {"ready": True}, self.proc.stderr.read()

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, f"the live app ended: {self.proc.stderr.read()[-2000:]}"
        return json.loads(line)

    def __call__(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.read()

    def quit(self) -> None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        assert self.read() == {"closed": True}
        assert self.proc.wait(timeout=30) == 0

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def env_for(home: Path) -> dict:
    return {**os.environ, "QUIZAPP_HOME": str(home), "PYTHONUNBUFFERED": "1"}


def quizapp(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quizapp", *args], env=env_for(home), cwd=home.parent,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def db(home: Path) -> Path:
    return home / "progress.sqlite3"


def integrity(home: Path) -> str:
    conn = sqlite3.connect(db(home))
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def fresh_counts(home: Path) -> dict:
    """What a new process sees: the progress export's counts."""
    out = home.parent / "progress.json"
    result = quizapp(home, "export", "json", str(out))
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    return {"answers": len(document["answers"]), "grades": len(document["grades"])}


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.mark.slow
def test_app_cli_watch_and_a_second_app_share_one_store(home):
    first = LiveApp(home)
    second = None
    watch = None
    try:
        assert first("answer sc-single 3") == {"ok": True}
        assert first("grade scaled_loop") == {"ok": True}
        assert first("reopen") == {"ok": True}  # a second open in a live app's process
        stats = quizapp(home, "stats")  # a CLI process that opens and closes the store beside it
        assert stats.returncode == 0, stats.stderr
        assert Path(f"{db(home)}-wal").exists(), "the WAL was deleted under a live connection"
        assert first("answer sc-multi 1") == {"ok": True}
        assert fresh_counts(home) == {"answers": 2, "grades": 1}

        second = LiveApp(home)
        assert second("count") == {"answers": 2, "grades": 1}
        assert second("answer sc-numeric 3") == {"ok": True}
        assert second("grade scaled_loop") == {"ok": True}
        assert first("count") == {"answers": 3, "grades": 2}

        solution = home.parent / "label_smoothing.py"
        solution.write_text(REFERENCE.read_text())
        graded = quizapp(home, "grade", str(solution), "--json")
        assert graded.returncode == 0, graded.stdout + graded.stderr
        assert first("count")["grades"] == second("count")["grades"] == 3

        watch = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", str(solution), "--json-lines"],
                                 env=env_for(home), cwd=home.parent, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = watch.stdout.readline()
        assert json.loads(line)["status"] == "pass", watch.stderr.read() if not line else line
        # `watch` records after printing: wait for its row rather than racing it.
        for _ in range(100):
            if first("count")["grades"] == 4:
                break
            subprocess.run(["sleep", "0.1"])
        assert first("count") == second("count") == {"answers": 3, "grades": 4}
        os.killpg(watch.pid, signal.SIGKILL)
        watch.wait(timeout=30)

        assert first("answer sc-text 4") == {"ok": True}
        assert second("count") == {"answers": 4, "grades": 4}
        assert Path(f"{db(home)}-wal").exists()
        assert integrity(home) == "ok"
        first.quit()
        assert second("answer sc-order 2") == {"ok": True}
        second.quit()
    finally:
        for live in (first, second):
            if live is not None and live.proc.poll() is None:
                live.kill()
        if watch is not None and watch.poll() is None:
            os.killpg(watch.pid, signal.SIGKILL)
    assert integrity(home) == "ok"
    assert fresh_counts(home) == {"answers": 5, "grades": 4}
    stats = quizapp(home, "stats")
    assert stats.returncode == 0 and "malformed" not in stats.stderr, stats.stderr


@pytest.mark.slow
def test_sigkill_of_a_live_app_loses_nothing_it_committed(home):
    survivor = LiveApp(home)
    victim = LiveApp(home)
    try:
        for qid in ("sc-single", "sc-multi", "sc-numeric"):
            assert victim(f"answer {qid} 3") == {"ok": True}
        assert victim("grade scaled_loop") == {"ok": True}
        victim.kill()
        assert survivor("count") == {"answers": 3, "grades": 1}
        assert survivor("answer sc-text 3") == {"ok": True}
        assert integrity(home) == "ok"
        survivor.quit()
    finally:
        for live in (survivor, victim):
            if live.proc.poll() is None:
                live.kill()
    assert fresh_counts(home) == {"answers": 4, "grades": 1}


WRITER = """
import sys
from quizapp.study.store import Store
store = Store.open()
n = 0
while True:
    store.record_grade("busy", status="fail", checks_passed=0, checks_total=1)
    n += 1
    print(n, flush=True)
"""


@pytest.mark.slow
def test_sigkill_mid_write_keeps_every_committed_row_and_the_file_sound(home):
    """A writer killed at an arbitrary point inside its loop: every row it reported is there, the file
    is sound, and the live app beside it goes on writing."""
    survivor = LiveApp(home)
    try:
        writer = subprocess.Popen([sys.executable, "-c", WRITER], env=env_for(home), stdout=subprocess.PIPE, text=True)
        acknowledged = 0
        while acknowledged < 200:
            acknowledged = int(writer.stdout.readline())
        writer.kill()
        writer.wait(timeout=30)
        seen = survivor("count")["grades"]
        assert seen >= acknowledged  # one more may have committed before its line was printed
        assert survivor("grade scaled_loop") == {"ok": True}
        assert integrity(home) == "ok"
        survivor.quit()
    finally:
        if survivor.proc.poll() is None:
            survivor.kill()
    assert fresh_counts(home)["grades"] == seen + 1


def test_one_process_shares_one_connection_across_opens_and_threads(home):
    import threading

    first = Store.open(db(home))
    second = Store.open(db(home))
    assert second is first  # the same connection, counted
    errors = []

    def write(tag: str) -> None:
        try:
            for _ in range(50):
                first.record_grade(tag, status="pass", checks_passed=1, checks_total=1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(first.grades()) == 200
    second.close()
    assert first.answer_count() == 0  # still open: the last close closes
    first.close()
    with pytest.raises(StoreFailed, match="closed database"):  # the store's own error, sqlite3's as its cause
        first.answer_count()
    third = Store.open(db(home))
    assert third is not first and len(third.grades()) == 200
    third.close()


AUDIT = """
import sys
from pathlib import Path
watched = str(Path(sys.argv[1]).resolve())
opened = []
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, Path)):
        if str(Path(str(args[0])).resolve()).startswith(watched):
            opened.append(str(args[0]))
sys.addaudithook(hook)

from quizapp.grading.record import record_grade
from quizapp.grading.result import GradeReport
from quizapp.study.stats import compute_stats
from quizapp.study.store import Store
from quizapp.study.transfer import export_progress
from quizapp.bank.cache import load_bank_cached

store = Store.open()
again = Store.open()
again.close()
report = GradeReport(exercise="x", file="x.py", status="pass", message=None, device="cpu", torch="t", duration_s=0.1)
assert record_grade(report, Path(sys.argv[0])) is None
assert record_grade(report, Path(sys.argv[0]), store) is None
export_progress(store)
compute_stats(load_bank_cached().outline(), store, now=None, exercise_ids=("x",))
store.close()
Store.open().close()
print(opened)
"""


def test_nothing_in_the_package_opens_the_database_file_except_sqlite(home):
    """Closing any descriptor of the file drops the process's SQLite locks, so only SQLite may open it.
    Python's audit hook sees every open() of the interpreter; SQLite's own opens are in C and not seen."""
    Store.open(db(home)).close()  # the file exists, as it would for a returning learner
    result = subprocess.run([sys.executable, "-c", AUDIT, str(db(home))], env=env_for(home),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
