"""The warm grader: a child forked from the zygote grades exactly as a cold one, check for check,
and a hostile solution can end only its own grade, never the zygote."""

from __future__ import annotations

import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from gradeutil import BUGGY, EXERCISE_IDS, EXERCISES, grade_cold_many, header_of
from test_reliability import FIRST_TIMEOUT_S, MARK, SIG, running, stopped, until_it_times_out
from warmutil import catalog, comparable, grade_warm, grade_warm_many, grader

from quizapp.grading.mutants import buggy_files
from quizapp.grading.runner import grade
from quizapp.grading.warm import WarmGrader


def sample(exercise: str) -> list[Path]:
    """The first buggy solution of the exercise, in name order, whose grade fails: one whose report holds
    failure messages to compare (test_mutants.py grades every one of them warm)."""
    for path in buggy_files(BUGGY / exercise):
        header = header_of(path)
        if header is not None and not header.passes and header.device is None:
            return [path]
    return []


# Every reference, and a buggy solution of each exercise: warm and cold give the same report for each.
FILES = [EXERCISES / e / "reference.py" for e in EXERCISE_IDS] + [p for e in EXERCISE_IDS for p in sample(e)]


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def up_front(items) -> list[tuple[str, tuple]]:
    """Both ways for each file the collected items compare (the cold references are test_mutants' too)."""
    paths = [i.callspec.params["path"] for i in items if "path" in getattr(getattr(i, "callspec", None), "params", {})]
    return [(way, (str(p),)) for p in dict.fromkeys(paths) for way in ("warm", "cold")]


@pytest.fixture(scope="module")
def both_ways():
    jobs = [(str(f),) for f in FILES]
    return {f: (c, w) for f, c, w in zip(FILES, grade_cold_many(jobs), grade_warm_many(jobs))}


@pytest.mark.parametrize("path", FILES, ids=label)
def test_warm_grade_equals_cold_grade(both_ways, path):
    cold, warm = both_ways[path]
    assert warm.code == cold.code
    assert comparable(warm.report) == comparable(cold.report)


# The tricks that fooled a check or a drill, each now caught: caught warm as cold (their own tests
# grade them cold; here the warm grade must give the same report).
CAUGHT = [BUGGY / name for name in (
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
                     "preloaded = sys.modules['quizapp.checking.loading'].PRELOADED\n"
                     f"Path({str(out)!r}).write_text(' '.join(Path(k).name for k in preloaded))\n")
    grade_warm((str(probe),))
    assert set(out.read_text().split()) >= set(catalog())  # every exercise, found through the catalog
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
    assert stopped(before)
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
    # The timeout strikes once both processes run (the pids file says so), however long they took to start.
    result, timeout = until_it_times_out(lambda t: grade_warm((str(path), "--timeout", t)), pids,
                                         FIRST_TIMEOUT_S["warm"])
    assert result.code == 1 and f"timed out after {timeout:g} s" in result.report["message"]
    assert all(stopped(int(p)) for p in pids.read_text().split())


def test_a_process_that_leaves_the_group_after_a_normal_end_is_stopped(tmp_path):
    pid_file = tmp_path / "escaped.pid"
    path = solution(tmp_path, "escaper", "return [0.0] * epochs\n", at_import=f"""
        escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(escaped.pid))
    """)
    result = grade_warm((str(path),))
    assert result.code == 1 and result.report["status"] == "fail"
    assert stopped(int(pid_file.read_text()))


def test_cancel_stops_the_grade_at_once(tmp_path):
    import threading

    pid_file = tmp_path / "solution.pid"
    path = solution(tmp_path, "looper", f"""
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        while True:
            pass
    """)
    cancel = threading.Event()
    done = {}
    worker = threading.Thread(target=lambda: done.setdefault("report", grade(
        path, catalog()["amp_training"], cancel=cancel, warm=grader())))
    worker.start()
    deadline = time.monotonic() + 120
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    cancel.set()
    worker.join(timeout=30)
    assert done["report"].message == "cancelled"
    assert stopped(int(pid_file.read_text()))


def test_closing_the_grader_leaves_no_process():
    zygote = WarmGrader()
    result = grade(EXERCISES / "warmup_cosine" / "reference.py", catalog()["warmup_cosine"], warm=zygote)
    assert result.status == "pass"
    pid = zygote.zygote_pid
    zygote.close()
    assert pid is not None and not running(pid)


def test_without_a_zygote_the_grade_is_cold_and_the_same(tmp_path):
    broken = WarmGrader(python=str(tmp_path / "no-such-python"))
    result = grade(EXERCISES / "warmup_cosine" / "reference.py", catalog()["warmup_cosine"], warm=broken)
    assert result.status == "pass"
    assert broken.failure and "could not start" in broken.failure


@pytest.mark.skipif(not Path("/dev/nvidiactl").exists(), reason="needs an NVIDIA GPU")
def test_a_cuda_grade_works_from_a_forked_child():
    result = grade_warm((str(EXERCISES / "amp_training" / "reference.py"), "--device", "cuda"))
    assert result.report["device"] == "cuda"
    assert result.code == 0, result.report
