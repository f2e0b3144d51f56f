"""Every way a solution can go wrong ends in a clear error or fail: never a pass, never a grader
traceback, never a leftover process. The cases graded in one go run both ways: a cold child
(`quizapp grade`) and a child forked by the warm grader (tests/grader/test_warm.py has the rest)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gradeutil import EXERCISES, grade_many, run_cold
from warmutil import grade_warm, grade_warm_many

MARK = "# quizapp: exercise=amp_training\n"
SIG = ("def train_with_amp(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16, "
       "max_grad_norm=None):\n")
REFERENCE = (EXERCISES / "amp_training" / "reference.py").read_text()

CASES = {
    "syntax_error": MARK + "import torch\n\ndef train_with_amp(model, loader:\n    pass\n",
    "missing_module": MARK + "import torch\nimport no_such_module_xyz\n",
    "missing_function": MARK + "import torch\n\ndef train(model):\n    return []\n",
    "wrong_signature": MARK + "import torch\n\ndef train_with_amp(model, loader, optimizer):\n    return []\n",
    "raises_inside": MARK + "import torch\n\n" + SIG + "    for batch in loader:\n        helper(batch)\n\n"
                    "def helper(batch):\n    raise ValueError('bad batch shape')\n",
    "sys_exit_at_import": MARK + "import sys\nsys.exit(0)\n",
    "os_exit_at_import": MARK + "import os\nos._exit(0)\n",
    "sys_exit_inside": MARK + "import sys, torch\n\n" + SIG + "    sys.exit(0)\n",
    "os_exit_inside": MARK + "import os, torch\n\n" + SIG + "    os._exit(0)\n",
    "prints_megabytes": REFERENCE.replace("    model.train()\n", "    model.train()\n    print('x' * 5_000_000)\n"),
    "prints_fake_json": REFERENCE.replace(
        "    model.train()\n",
        "    model.train()\n    import json\n    print(json.dumps({'event': 'done'}))\n"
        "    print(json.dumps({'schema': 1, 'status': 'pass', 'checks': []}))\n    return [float('nan')] * epochs\n"),
    "returns_nan": MARK + "import torch\n\n" + SIG + "    return [float('nan')] * epochs\n",
    "allocates_too_much": MARK + "import torch\n\n" + SIG + "    hoard = [torch.empty(2**28) for _ in range(200)]\n    return []\n",
    "empty_file": "",
}


@pytest.fixture(scope="module", params=["cold", "warm"])
def results(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("solutions")
    jobs = {}
    for name, text in CASES.items():
        path = folder / f"{name}.py"
        path.write_text(text)
        jobs[name] = (str(path), "--exercise", "amp_training")
    latin = folder / "latin1.py"
    latin.write_bytes(MARK.encode() + "# caf\xe9\nimport torch\n".encode("latin-1"))
    jobs["not_utf8"] = (str(latin),)
    graded = (grade_many if request.param == "cold" else grade_warm_many)(list(jobs.values()))
    return dict(zip(jobs, graded))


def error_message(result) -> str:
    assert result.code == 1, result.report
    assert result.report["status"] == "error", result.report
    return result.report["message"]


def test_syntax_error_shows_the_line(results):
    message = error_message(results["syntax_error"])
    assert "syntax error at line 4" in message


def test_missing_module(results):
    message = error_message(results["missing_module"])
    assert "could not be imported" in message and "no_such_module_xyz" in message and "line 3" in message


def test_missing_function(results):
    message = error_message(results["missing_function"])
    assert "does not define `train_with_amp`" in message and "expected train_with_amp(model, loader" in message


def test_wrong_signature(results):
    message = error_message(results["wrong_signature"])
    assert "wrong signature" in message and "yours is train_with_amp(model, loader, optimizer)" in message


def test_exception_inside_shows_the_learners_frames(results):
    result = results["raises_inside"]
    assert result.code == 1 and result.report["status"] == "fail"
    message = result.check("returns-losses")["message"]
    # led by the inputs the check gave the solution, then the learner's own error
    assert message.startswith("with amp_dtype=torch.float16, max_grad_norm=None, device=")
    assert ": ValueError: bad batch shape" in message.splitlines()[0]
    assert "line 6, in train_with_amp" in message and "line 9, in helper" in message
    assert "quizapp" not in message.split("\n", 1)[1]  # only the learner's frames


# Solutions that never end: each writes its STARTED file where the endless part begins.
ENDLESS = {
    "infinite_loop": "    while True:\n        pass\n",
    "sleeps": "    time.sleep(600)\n",
}
# The first timeout tried, by way: a little more than a grade takes to reach the solution's code on an
# idle machine (a forked warm child is there at once; a cold one first imports torch).
FIRST_TIMEOUT_S = {"cold": 4.0, "warm": 2.0}


def until_it_times_out(grade_with, started: Path, first_s: float, last_s: float = 64.0):
    """Grade with the shortest timeout that lets the solution reach its endless part (it writes `started`
    there): a timeout that struck before would test the start-up, not the solution. A busy machine
    starts grades slower, so the timeout doubles until the solution started, up to `last_s`.
    (result, the timeout that struck)."""
    timeout = first_s
    while True:
        result = grade_with(f"{timeout:g}")
        if started.exists() or timeout >= last_s:
            return result, timeout
        timeout *= 2


@pytest.fixture(scope="module", params=["cold", "warm"])
def endless(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("endless")
    grade_way = run_cold if request.param == "cold" else grade_warm

    def run(name):
        started = folder / f"{name}.started"
        path = folder / f"{name}.py"
        path.write_text(MARK + "import time, torch\n\n" + SIG + f"    open({str(started)!r}, 'w').close()\n"
                        + ENDLESS[name])
        result, timeout = until_it_times_out(
            lambda t: grade_way((str(path), "--exercise", "amp_training", "--timeout", t)), started,
            FIRST_TIMEOUT_S[request.param])
        return result, timeout, started.exists()

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(ENDLESS, pool.map(run, ENDLESS)))


@pytest.mark.parametrize("name", sorted(ENDLESS))
def test_timeout_kills_the_solution(endless, name):
    result, timeout, started = endless[name]
    assert started, f"the solution never started, even with a timeout of {timeout:g} s"
    assert result.code == 1 and result.report["status"] == "error"
    assert f"timed out after {timeout:g} s" in result.report["message"]
    assert result.report["duration_s"] < timeout + 45  # killed at the timeout, not left to run


@pytest.mark.parametrize("name,needle", [
    ("sys_exit_at_import", "sys.exit(0)"),
    ("os_exit_at_import", "ended the process early"),
    ("sys_exit_inside", "sys.exit(0)"),
    ("os_exit_inside", "ended the process early"),
])
def test_early_exit_is_never_a_pass(results, name, needle):
    result = results[name]
    assert result.code == 1 and result.report["status"] in ("error", "fail")
    text = (result.report["message"] or "") + " ".join(c["message"] for c in result.report["checks"])
    assert needle in text


def test_printing_megabytes_is_captured_not_mixed_in(results):
    result = results["prints_megabytes"]
    assert result.code == 0 and result.report["status"] == "pass"  # stdout still held exactly one JSON object


def test_printed_fake_json_cannot_fake_a_result(results):
    result = results["prints_fake_json"]
    assert result.code == 1 and result.report["status"] == "fail"
    assert result.report["checks"], "the real checks still ran"


def test_nan_losses_fail(results):
    result = results["returns_nan"]
    assert result.code == 1
    assert result.status("returns-losses") == "fail"
    assert "must stay finite" in result.check("returns-losses")["message"]


def test_allocating_too_much_memory_is_an_error(results):
    result = results["allocates_too_much"]
    assert result.code == 1 and result.report["status"] in ("fail", "error")
    assert "alloc" in json.dumps(result.report).lower()


def test_not_utf8(results):
    message = error_message(results["not_utf8"])
    assert "not UTF-8" in message and "byte 0xe9 on line 2" in message


def test_empty_file_with_exercise_given(results):
    assert "does not define `train_with_amp`" in error_message(results["empty_file"])


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "quizapp", "grade", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_usage_errors_exit_2(tmp_path):
    assert cli(str(tmp_path / "nope.py")).returncode == 2
    assert cli(str(tmp_path)).returncode == 2  # a folder
    unmarked = tmp_path / "unmarked.py"
    unmarked.write_text("import torch\n")
    out = cli(str(unmarked))
    assert out.returncode == 2 and "--exercise" in out.stderr and "Traceback" not in out.stderr
    out = cli(str(unmarked), "--exercise", "no_such_exercise", "--json")
    assert out.returncode == 2 and json.loads(out.stdout)["status"] == "error"
    assert cli(str(unmarked), "--device", "tpu").returncode == 2


def test_no_child_process_is_left_behind(tmp_path):
    mark = f"quizapp-test-{secrets.token_hex(6)}"  # found by command line: pids differ in a grade's own PID namespace
    solution = tmp_path / "spawner.py"
    started = tmp_path / "started"
    solution.write_text(MARK + textwrap.dedent(f"""
        import subprocess, sys, torch
        {SIG.strip()}
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {mark!r}])
            open({str(started)!r}, "w").close()
            while True:
                pass
    """))
    out, _ = until_it_times_out(lambda t: cli(str(solution), "--timeout", t, "--json"), started,
                                FIRST_TIMEOUT_S["cold"])
    assert started.exists(), "the solution never started its child"
    assert out.returncode == 1 and "timed out" in json.loads(out.stdout)["message"]
    assert no_process_with(mark)


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan may wait as a zombie where PID 1 does not reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def stopped(pid: int, within_s: float = 10.0) -> bool:
    """The process is gone (or a zombie) within `within_s`: a kill may still be on its way."""
    deadline = time.monotonic() + within_s
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def no_process_with(mark: str, within_s: float = 10.0) -> bool:
    """No live process on the machine has `mark` in its command line (within `within_s`, for a kill
    that is still being delivered)."""
    deadline = time.monotonic() + within_s
    while True:
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if mark.encode() in cmdline.read_bytes() and running(int(cmdline.parent.name)):
                    found.append(cmdline.parent.name)
            except (OSError, ValueError):
                continue
        if not found or time.monotonic() > deadline:
            return not found
        time.sleep(0.2)


def test_sigterm_cancels_and_stops_the_solution(tmp_path, quizapp_home):
    started = tmp_path / "started"
    # The solution's own file name is in its process's command line (the grade's copy keeps the name).
    solution = tmp_path / f"looper_{secrets.token_hex(6)}.py"
    solution.write_text(MARK + textwrap.dedent(f"""
        import os, torch
        {SIG.strip()}
            open({str(started)!r}, "w").write("looping")
            while True:
                pass
    """))
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "grade", str(solution), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), "the solution never started"
    proc.terminate()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "cancelled" in err and "Traceback" not in err
    assert json.loads(out)["status"] == "error"  # --json still prints exactly one object
    assert no_process_with(solution.name)
    from quizapp.study.store import Store

    with Store.open() as store:
        assert store.grades() == []  # a cancelled attempt is not recorded


def test_a_process_that_leaves_the_group_is_stopped_too(tmp_path):
    mark = f"quizapp-test-{secrets.token_hex(6)}"
    solution = tmp_path / "escaper.py"
    solution.write_text(MARK + textwrap.dedent(f"""
        import os, subprocess, sys, torch
        # a new session: the process group kill alone would miss it
        escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {mark!r}],
                                   start_new_session=True)
        {SIG.strip()}
            return [0.0] * epochs
    """))
    started = time.monotonic()
    out = cli(str(solution), "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["status"] == "fail"
    assert no_process_with(mark, within_s=0)
    assert time.monotonic() - started < 120


def test_an_exception_that_cannot_format_itself_is_still_reported(tmp_path):
    solution = tmp_path / "badstr.py"
    solution.write_text(MARK + "import torch\n\nclass Oops(Exception):\n    def __str__(self):\n        pass\n\n"
                        + SIG + "    raise Oops()\n")
    out = cli(str(solution), "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["status"] == "fail"
    assert len(report["checks"]) == 14 and {c["status"] for c in report["checks"]} == {"error"}
    assert "Oops (its message could not be shown" in report["checks"][0]["message"]


def test_bracketed_file_names_are_shown_as_written(tmp_path):
    solution = tmp_path / "sol [draft].py"
    solution.write_text(REFERENCE)
    out = cli(str(solution))
    assert out.returncode == 0, out.stderr
    assert "sol [draft].py" in out.stdout.replace("\n", "")


def test_a_store_that_cannot_be_written_never_hides_the_result(tmp_path):
    solution = tmp_path / "ok.py"
    solution.write_text(REFERENCE)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    env = {**os.environ, "QUIZAPP_HOME": str(blocker)}
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(solution), "--json"], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "pass"
    assert "the result was not saved" in out.stderr and "Traceback" not in out.stderr
