"""The warm grader: a child forked from the zygote grades exactly as a cold one, check for check,
and a hostile solution can end only its own grade, never the zygote."""

from __future__ import annotations

import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from gradeutil import EXERCISES, grade_cold_many
from test_reliability import MARK, SIG, running
from warmutil import comparable, grade_warm, grade_warm_many, grader

from quizapp.catalog import load_catalog
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader

BUGGY = Path(__file__).parent / "buggy"
# Every reference, and a sample of each exercise's buggy matrix (the matrices themselves are graded
# warm by gradeutil): the first two bugs of each, in name order.
SAMPLE = 2
FILES = sorted(EXERCISES.glob("*/reference.py")) + [
    bug for folder in sorted(p for p in BUGGY.iterdir() if p.is_dir()) for bug in sorted(folder.glob("*.py"))[:SAMPLE]]


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.fixture(scope="module")
def both_ways():
    jobs = [(str(f),) for f in FILES]
    warm = grade_warm_many(jobs)  # first: the zygote is fresh, and these run while nothing else does
    cold = grade_cold_many(jobs)
    return {f: (c, w) for f, c, w in zip(FILES, cold, warm)}


@pytest.mark.timeout(7200)  # the first one waits for about 50 grades, on a small machine
@pytest.mark.parametrize("path", FILES, ids=label)
def test_warm_grade_equals_cold_grade(both_ways, path):
    cold, warm = both_ways[path]
    assert warm.code == cold.code
    assert comparable(warm.report) == comparable(cold.report)


# The tricks that fooled a check or a drill, each now caught: caught warm as cold (their own tests
# grade them cold; here the warm grade must give the same report).
BUGGY_ROOT = Path(__file__).parent / "buggy"
CAUGHT = [BUGGY_ROOT / name for name in (
    "debug_total_loss_graph/hidden_by_save_on_cpu.py", "debug_total_loss_graph/hidden_by_checkpointing.py",
    "debug_accum_not_divided/lr_divided_by_hooks.py", "debug_half_adam_eps/eps_raised_by_hooks.py",
    "debug_log_softmax/float64_probs.py", "debug_log_softmax/patches_model_class.py",
    "label_smoothing/uses_builtin_through_aten.py", "label_smoothing/uses_builtin_captured.py")] + [
    Path(__file__).parent / "hostile" / "accumulation_unseen.py"]


@pytest.fixture(scope="module")
def caught_both_ways():
    jobs = [(str(f),) for f in CAUGHT]
    return dict(zip(CAUGHT, zip(grade_cold_many(jobs), grade_warm_many(jobs))))


@pytest.mark.parametrize("path", CAUGHT, ids=label)
def test_a_caught_trick_is_caught_warm_too(caught_both_ways, path):
    cold, warm = caught_both_ways[path]
    assert cold.code == warm.code == 1
    assert comparable(warm.report) == comparable(cold.report)


def test_the_zygote_imported_torch_and_every_checks_module_and_has_one_thread(tmp_path):
    probe = tmp_path / "probe.py"
    out = tmp_path / "seen.txt"
    probe.write_text(MARK + "import sys\nfrom pathlib import Path\n"
                     "preloaded = sys.modules['quizapp.grading.child'].PRELOADED\n"
                     f"Path({str(out)!r}).write_text(' '.join(Path(k).name for k in preloaded))\n")
    grade_warm((str(probe),))
    assert set(out.read_text().split()) >= set(load_catalog())  # every exercise, found through the catalog
    pid = grader().zygote_pid
    assert pid is not None and len(os.listdir(f"/proc/{pid}/task")) == 1  # safe to fork: no other thread
    assert grader().cuda_fork_safe  # the CUDA driver was never loaded there


def solution(tmp_path: Path, name: str, body: str, *, at_import: str = "") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(MARK + "import os, signal, subprocess, sys, time, torch\n" + textwrap.dedent(at_import)
                    + SIG + textwrap.indent(textwrap.dedent(body), "    "))
    return path


def test_a_solution_that_kills_its_parents_process_group_ends_only_its_grade(tmp_path):
    zygote = grader()
    grade_warm((str(EXERCISES / "warmup_cosine" / "reference.py"),))
    before = zygote.zygote_pid
    path = solution(tmp_path, "parricide", "return [0.0] * epochs\n",
                    at_import="os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n")
    result = grade_warm((str(path),))
    assert result.code == 1 and result.report["status"] == "error"
    assert "killed by SIGKILL" in result.report["message"]
    assert zygote.zygote_pid == before  # the zygote lives on
    again = grade_warm((str(EXERCISES / "warmup_cosine" / "reference.py"),))
    assert again.code == 0 and zygote.zygote_pid == before


def test_a_dead_zygote_is_replaced_silently():
    zygote = grader()
    reference = str(EXERCISES / "warmup_cosine" / "reference.py")
    grade_warm((reference,))
    before = zygote.zygote_pid
    os.kill(before, signal.SIGKILL)
    time.sleep(0.2)
    result = grade_warm((reference,))
    assert result.code == 0 and result.report["status"] == "pass", result.report
    assert zygote.zygote_pid not in (None, before)


def test_timeout_kills_what_the_solution_started_and_what_left_the_group(tmp_path):
    pids = tmp_path / "pids"
    path = solution(tmp_path, "spawner", f"""
        inside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        outside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{inside.pid}} {{outside.pid}}")
        while True:
            pass
    """)
    result = grade_warm((str(path), "--timeout", "10"))
    assert result.code == 1 and "timed out after 10 s" in result.report["message"]
    time.sleep(0.5)
    assert not any(running(int(p)) for p in pids.read_text().split())


def test_a_process_that_leaves_the_group_after_a_normal_end_is_stopped(tmp_path):
    pid_file = tmp_path / "escaped.pid"
    path = solution(tmp_path, "escaper", "return [0.0] * epochs\n", at_import=f"""
        escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(escaped.pid))
    """)
    result = grade_warm((str(path),))
    assert result.code == 1 and result.report["status"] == "fail"
    time.sleep(0.5)
    assert not running(int(pid_file.read_text()))


def test_cancel_stops_the_grade_at_once(tmp_path):
    import threading

    pid_file = tmp_path / "solution.pid"
    path = solution(tmp_path, "looper", f"""
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        while True:
            pass
    """)
    cancel = threading.Event()
    ex = load_catalog()["amp_training"]
    done = {}
    worker = threading.Thread(target=lambda: done.setdefault("report", grade(
        path, ex.folder, exercise_id=ex.id, cancel=cancel, warm=grader())))
    worker.start()
    deadline = time.monotonic() + 120
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    cancel.set()
    worker.join(timeout=30)
    assert done["report"].message == "cancelled"
    time.sleep(0.3)
    assert not running(int(pid_file.read_text()))


def test_closing_the_grader_leaves_no_process():
    zygote = WarmGrader()
    result = grade(EXERCISES / "warmup_cosine" / "reference.py", EXERCISES / "warmup_cosine",
                   exercise_id="warmup_cosine", warm=zygote)
    assert result.status == "pass"
    pid = zygote.zygote_pid
    zygote.close()
    assert pid is not None and not running(pid)


def test_without_a_zygote_the_grade_is_cold_and_the_same(tmp_path):
    broken = WarmGrader(python=str(tmp_path / "no-such-python"))
    result = grade(EXERCISES / "warmup_cosine" / "reference.py", EXERCISES / "warmup_cosine",
                   exercise_id="warmup_cosine", warm=broken)
    assert result.status == "pass"
    assert broken.failure and "could not start" in broken.failure


@pytest.mark.skipif(not Path("/dev/nvidiactl").exists(), reason="needs an NVIDIA GPU")
def test_a_cuda_grade_works_from_a_forked_child():
    result = grade_warm((str(EXERCISES / "amp_training" / "reference.py"), "--device", "cuda"))
    assert result.report["device"] == "cuda"
    assert result.code == 0, result.report
