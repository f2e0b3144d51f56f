"""The grade's child sandbox (quizapp.checking.sandbox). Applying it cannot be undone, so every case
applies it in a fresh Python process and reads back, as JSON, what that process could and could not
do. Where the kernel lacks a Landlock feature the case is skipped, with the reason."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from quizapp.checking import sandbox

ROOT = Path(__file__).resolve().parents[2]
ABI, NO_LANDLOCK = sandbox.landlock_abi()

needs_landlock = pytest.mark.skipif(ABI < 1, reason=f"no Landlock here: {NO_LANDLOCK}")
needs_network = pytest.mark.skipif(ABI < 4, reason=f"TCP rules need Landlock ABI 4; this kernel has {ABI}")
needs_scopes = pytest.mark.skipif(ABI < 6, reason=f"signal and socket scopes need Landlock ABI 6; this kernel has "
                                                  f"{ABI}")

# Run first in every sandboxed process: `attempt` records "ok", "denied" (PermissionError) or the
# errno's name; `report` prints what the sandbox said and every attempt, as the last line.
PRELUDE = '''
import errno, json, os, signal, socket, subprocess, sys, threading, time
from pathlib import Path
from quizapp.checking import sandbox

results = {}

def attempt(name, action):
    try:
        action()
        results[name] = "ok"
    except PermissionError:
        results[name] = "denied"
    except OSError as exc:
        results[name] = errno.errorcode.get(exc.errno, str(exc))

def write(path, mode="w"):
    with open(path, mode) as fh:
        fh.write("forged")

def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass

def report(protection):
    print(json.dumps({"protection": protection.as_dict(), "header": protection.describe(), "results": results}))
'''


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def sandboxed(body: str, cwd: Path, *, timeout: float = 60, **extra: str) -> dict:
    """Run PRELUDE + `body` in a fresh interpreter; the JSON its `report` printed."""
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], cwd=cwd, capture_output=True,
                         text=True, timeout=timeout, env=child_env(**extra))
    assert out.returncode == 0, f"exit {out.returncode}\nstdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@needs_landlock
def test_writes_only_in_the_grades_folder(tmp_path, work, quizapp_home):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("mine")
    quizapp_home.mkdir(parents=True)
    store = quizapp_home / "progress.sqlite3"
    store.write_bytes(b"SQLite format 3\x00")
    installed = tmp_path / "site-packages" / "exercises" / "label_smoothing"
    installed.mkdir(parents=True)
    checks = installed / "checks.py"
    shutil.copy(ROOT / "exercises" / "label_smoothing" / "checks.py", checks)
    before = checks.read_bytes()

    seen = sandboxed(f'''
        work, elsewhere = Path({str(work)!r}), Path({str(elsewhere)!r})
        home, checks = Path({str(quizapp_home)!r}), Path({str(checks)!r})
        protection = sandbox.apply(work)
        attempt("work: write", lambda: write(work / "out.txt"))
        attempt("work: mkdir", lambda: (work / "sub").mkdir())
        attempt("work: rename", lambda: os.replace(work / "out.txt", work / "sub" / "moved.txt"))
        attempt("work: remove", lambda: os.remove(work / "sub" / "moved.txt"))
        attempt("elsewhere: new file", lambda: write(elsewhere / "new.txt"))
        attempt("elsewhere: append", lambda: write(elsewhere / "notes.txt", "a"))
        attempt("elsewhere: truncate", lambda: os.truncate(elsewhere / "notes.txt", 0))
        attempt("elsewhere: symlink", lambda: os.symlink("/etc/passwd", elsewhere / "link"))
        attempt("elsewhere: read", lambda: (elsewhere / "notes.txt").read_text())
        attempt("store: open for writing", lambda: write(home / "progress.sqlite3", "a"))
        attempt("store: new file", lambda: write(home / "forged.sqlite3"))
        attempt("checks: overwrite", lambda: write(checks))
        attempt("checks: remove", lambda: os.remove(checks))
        attempt("checks: move into work", lambda: os.replace(checks, work / "checks.py"))
        attempt("package: append", lambda: open(sandbox.__file__, "a").close())
        attempt("/dev/null", lambda: write(os.devnull))
        attempt("/tmp", lambda: write("/tmp/quizapp-sandbox-test-%d" % os.getpid()))
        report(protection)
    ''', work)

    p = seen["protection"]
    assert (p["kind"], p["abi"], p["filesystem"]) == ("landlock", ABI, True)
    assert seen["header"].startswith(f"sandbox: Landlock ABI {ABI} (writes only in the grade's folder")
    r = seen["results"]
    assert {k: v for k, v in r.items() if k.startswith("work:")} == dict.fromkeys(
        ["work: write", "work: mkdir", "work: rename", "work: remove"], "ok")
    denied = ["elsewhere: new file", "elsewhere: append", "elsewhere: symlink", "store: open for writing",
              "store: new file", "checks: overwrite", "checks: remove", "checks: move into work", "package: append",
              "/tmp"] + (["elsewhere: truncate"] if ABI >= 3 else [])
    assert {k: r[k] for k in denied} == dict.fromkeys(denied, "denied")
    assert r["elsewhere: read"] == "ok" and r["/dev/null"] == "ok"
    assert (elsewhere / "notes.txt").read_text() == "mine" and not (elsewhere / "new.txt").exists()
    assert store.read_bytes() == b"SQLite format 3\x00" and not (quizapp_home / "forged.sqlite3").exists()
    assert checks.read_bytes() == before


@needs_landlock
def test_the_grader_s_descriptors_are_out_of_reach(work):
    """The grader's stdout is a pipe here, a file Landlock's path rules never see: what stops the
    solution is that /proc/<pid>/fd of a process outside the sandbox cannot be opened at all."""
    child = PRELUDE + textwrap.dedent(f'''
        protection = sandbox.apply(Path({str(work)!r}))
        parent = os.getppid()
        for fd in (1, 2):
            path = f"/proc/{{parent}}/fd/{{fd}}"
            attempt(f"parent fd {{fd}}: open", lambda: os.write(os.open(path, os.O_WRONLY), b"FORGED\\n"))
        attempt("parent fd 1: python open", lambda: write(f"/proc/{{parent}}/fd/1", "a"))
        attempt("own fd 1", lambda: os.close(os.open("/proc/self/fd/1", os.O_WRONLY)))
        report(protection)
    ''')
    grader = f"import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', {child!r}]).returncode)"
    out = subprocess.run([sys.executable, "-c", grader], cwd=work, capture_output=True, text=True, timeout=60,
                         env=child_env())
    assert out.returncode == 0, out.stderr
    assert "FORGED" not in out.stdout and "FORGED" not in out.stderr
    results = json.loads(out.stdout.strip().splitlines()[-1])["results"]
    assert results == {"parent fd 1: open": "denied", "parent fd 2: open": "denied",
                       "parent fd 1: python open": "denied", "own fd 1": "ok"}


@needs_scopes
def test_no_signals_outside_the_grade(work):
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        seen = sandboxed(f'''
            protection = sandbox.apply(Path({str(work)!r}))
            attempt("parent: probe", lambda: os.kill(os.getppid(), 0))
            attempt("bystander: SIGTERM", lambda: os.kill({bystander.pid}, signal.SIGTERM))
            attempt("bystander: SIGKILL", lambda: os.kill({bystander.pid}, signal.SIGKILL))
            attempt("own group", lambda: os.killpg(os.getpgid(0), 0))
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            attempt("own child: SIGKILL", lambda: os.kill(pid, signal.SIGKILL))
            os.waitpid(pid, 0)
            report(protection)
        ''', work)
        assert seen["protection"]["signals"] is True
        assert "no signals outside the grade" in seen["header"]
        r = seen["results"]
        assert (r["parent: probe"], r["bystander: SIGTERM"], r["bystander: SIGKILL"]) == ("denied",) * 3
        assert r["own child: SIGKILL"] == "ok"
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


@needs_scopes
def test_no_abstract_unix_sockets_outside_the_grade(work):
    name = f"\0quizapp-sandbox-test-{os.getpid()}"
    outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    outside.bind(name)
    outside.listen(4)
    try:
        seen = sandboxed(f'''
            protection = sandbox.apply(Path({str(work)!r}))
            def connect(address):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.connect(address)
            attempt("outside the grade", lambda: connect({name!r}))
            inside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            inside.bind({name + "-inside"!r})
            inside.listen(4)
            pid = os.fork()
            if pid == 0:  # a rank started by the grade talks to its sibling
                try:
                    connect({name + "-inside"!r})
                    os._exit(0)
                except OSError:
                    os._exit(1)
            results["inside the grade"] = "ok" if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 else "denied"
            report(protection)
        ''', work)
        assert seen["results"] == {"outside the grade": "denied", "inside the grade": "ok"}
    finally:
        outside.close()


def listener(port: int = 0) -> socket.socket:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", port))
    server.listen(8)
    return server


def below_ephemeral_listener() -> socket.socket:
    """A listener on a port below the ephemeral range (where web servers and databases listen)."""
    low = sandbox.ephemeral_tcp_ports()[1]
    for port in range(low - 1, 1024, -1):
        try:
            return listener(port)
        except OSError:
            continue
    pytest.skip("no free port below the ephemeral range")


@needs_network
@pytest.mark.parametrize(("options", "expect_open", "expect_other"), [
    ("", "denied", "denied"),
    ("allow_tcp_ports=[OPEN]", "ok", "denied"),
    ("allow_all_tcp=True", "ok", "ok"),
], ids=["no TCP", "one port", "all TCP"])
def test_tcp_only_where_the_exercise_needs_it(work, options, expect_open, expect_other):
    open_server, other_server = listener(), listener()
    open_port, other_port = open_server.getsockname()[1], other_server.getsockname()[1]
    try:
        seen = sandboxed(f'''
            protection = sandbox.apply(Path({str(work)!r}), {options.replace("OPEN", str(open_port))})
            attempt("open port", lambda: connect({open_port}))
            attempt("other port", lambda: connect({other_port}))
            attempt("bind a port", lambda: socket.socket().bind(("127.0.0.1", 0)))
            report(protection)
        ''', work)
    finally:
        open_server.close()
        other_server.close()
    assert seen["results"]["open port"] == expect_open
    assert seen["results"]["other port"] == expect_other
    assert seen["results"]["bind a port"] == ("ok" if expect_other == "ok" else "denied")
    assert seen["protection"]["network"] is (expect_other != "ok")
    assert ("no network" in seen["header"]) is (options == "")


@needs_network
def test_ddp_gloo_ranks_work_on_ephemeral_ports_while_service_ports_stay_closed(work):
    """gloo's ranks listen on ephemeral ports (bind to 0) and connect to each other's: allowing port 0
    and the ephemeral range is enough for DDP on one machine, and keeps well-known ports closed."""
    service = below_ephemeral_listener()
    service_port = service.getsockname()[1]
    (work / "tmp").mkdir()
    try:
        seen = sandboxed(f'''
            import datetime
            import torch, torch.distributed as dist
            protection = sandbox.apply(Path({str(work)!r}), allow_tcp_ports=sandbox.ephemeral_tcp_ports())
            attempt("service port", lambda: connect({service_port}))
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))  # as the exercise's launcher picks the rendezvous port
                port = s.getsockname()[1]
            ranks = []
            for rank in range(2):
                pid = os.fork()
                if pid == 0:
                    status = 1
                    try:
                        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{{port}}", rank=rank,
                                                world_size=2, timeout=datetime.timedelta(seconds=20))
                        total = torch.ones(1) * (rank + 1)
                        dist.all_reduce(total)
                        status = 0 if total.item() == 3.0 else 2
                    finally:
                        os._exit(status)
                ranks.append(pid)
            results["ranks"] = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in ranks]
            report(protection)
        ''', work, timeout=120, GLOO_SOCKET_IFNAME="lo", TMPDIR=str(work / "tmp"))
    finally:
        service.close()
    assert seen["results"] == {"service port": "denied", "ranks": [0, 0]}
    low, high = sandbox.ephemeral_tcp_ports()[1], sandbox.ephemeral_tcp_ports()[-1]
    assert f"TCP only on ports 0, {low}-{high}" in seen["header"]


@needs_landlock
def test_torch_imports_and_trains_after_the_sandbox(tmp_path, work):
    seen = sandboxed(f'''
        protection = sandbox.apply(Path({str(work)!r}))
        import torch
        import multiprocessing
        model = torch.nn.Linear(4, 2)
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        torch.optim.SGD(model.parameters(), lr=0.1).step()
        results["trained"] = "ok" if model.weight.grad is not None else "no grad"
        attempt("share memory (/dev/shm)", lambda: torch.ones(4).share_memory_())
        attempt("multiprocessing lock (/dev/shm)", lambda: multiprocessing.Lock())
        def save(path):
            with open(path, "wb") as fh:
                torch.save(model.state_dict(), fh)
        attempt("save in work", lambda: save(Path({str(work)!r}) / "model.pt"))
        attempt("save elsewhere", lambda: save(Path({str(tmp_path)!r}) / "model.pt"))
        report(protection)
    ''', work, timeout=120)
    assert seen["results"] == {"trained": "ok", "share memory (/dev/shm)": "ok",
                               "multiprocessing lock (/dev/shm)": "ok", "save in work": "ok",
                               "save elsewhere": "denied"}
    assert not (tmp_path / "model.pt").exists()


@needs_landlock
def test_what_the_solution_starts_is_restricted_too(tmp_path, work):
    target = tmp_path / "escaped.txt"
    seen = sandboxed(f'''
        protection = sandbox.apply(Path({str(work)!r}))
        pid = os.fork()
        if pid == 0:
            try:
                write({str(target)!r})
                os._exit(0)
            except PermissionError:
                os._exit(13)
        results["forked grandchild"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        shell = subprocess.run(["sh", "-c", "echo forged > {target}"], capture_output=True)
        results["exec'd shell"] = shell.returncode
        report(protection)
    ''', work)
    assert seen["results"]["forked grandchild"] == 13
    assert seen["results"]["exec'd shell"] != 0
    assert not target.exists()


@needs_landlock
def test_threads_started_before_the_sandbox_are_named_in_the_header(tmp_path, work):
    """Landlock before ABI 8 binds only the calling thread: the header says so, and it is true."""
    target = tmp_path / "from-a-thread.txt"
    seen = sandboxed(f'''
        go, done = threading.Event(), threading.Event()
        def early():
            go.wait()
            attempt("thread started before", lambda: write({str(target)!r}))
            done.set()
        threading.Thread(target=early).start()
        protection = sandbox.apply(Path({str(work)!r}))
        go.set()
        done.wait()
        report(protection)
    ''', work)
    if ABI >= 8:
        assert seen["results"]["thread started before"] == "denied"
        assert "thread" not in seen["protection"]["note"]
    else:
        assert seen["results"]["thread started before"] == "ok"
        assert "1 thread started before the sandbox keeps its rights" in seen["header"]


@needs_landlock
@pytest.mark.skipif(os.geteuid() != 0, reason="only a process run as root has capabilities to drop")
def test_root_gives_up_its_capabilities(work):
    seen = sandboxed(f'''
        protection = sandbox.apply(Path({str(work)!r}))
        results["self"] = sandbox._effective_capabilities()
        shell = subprocess.run(["sh", "-c", "grep CapEff /proc/self/status"], capture_output=True, text=True)
        results["exec'd"] = int(shell.stdout.split()[1], 16)
        report(protection)
    ''', work)
    assert seen["results"] == {"self": 0, "exec'd": 0}
    assert "every capability of this process dropped" in seen["header"]


@pytest.mark.skipif(ABI < sandbox._TESTED_ABI, reason=f"needs a kernel with Landlock ABI {sandbox._TESTED_ABI}")
def test_abi_8_and_9_requests_fall_back_where_the_kernel_refuses_them(tmp_path, work):
    """Told the kernel has ABI 9, the sandbox asks for TSYNC and RESOLVE_UNIX; a kernel without them
    refuses (EINVAL), and the sandbox falls back to the newest ABI tested rather than to nothing."""
    seen = sandboxed(f'''
        sandbox.landlock_abi = lambda: (9, "")
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # TSYNC is asked for with threads
        protection = sandbox.apply(Path({str(work)!r}))
        attempt("elsewhere", lambda: write({str(tmp_path / "unguarded.txt")!r}))
        report(protection)
    ''', work)
    assert seen["protection"]["kind"] == "landlock" and seen["results"]["elsewhere"] == "denied"
    assert seen["protection"]["abi"] == (9 if ABI >= 9 else sandbox._TESTED_ABI)


def test_a_missing_work_dir_is_the_caller_s_error(tmp_path):
    out = subprocess.run([sys.executable, "-c", PRELUDE + f"sandbox.apply(Path({str(tmp_path / 'nope')!r}))"],
                         capture_output=True, text=True, timeout=60, env=child_env())
    assert out.returncode == 1 and "FileNotFoundError" in out.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.uname().machine not in sandbox._ARCHITECTURES,
                    reason="simulates a Linux kernel without the Landlock calls")
def test_without_landlock_nothing_is_restricted_and_the_header_says_so(tmp_path, work):
    """A kernel without the call (ENOSYS), as Linux before 5.13: no error, an honest header."""
    seen = sandboxed(f'''
        sandbox._LANDLOCK_SYSCALLS = (1023, 1023, 1023)  # numbers no kernel has
        protection = sandbox.apply(Path({str(work)!r}))
        attempt("elsewhere", lambda: write({str(tmp_path / "unguarded.txt")!r}))
        report(protection)
    ''', work)
    assert seen["protection"]["kind"] == "none" and seen["results"]["elsewhere"] == "ok"
    assert seen["header"] == ("sandbox: none (this kernel has no Landlock (Linux 5.13 or later has it): "
                              "the solution runs with your user's rights)")


def test_macos_has_no_landlock(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert sandbox.landlock_abi() == (0, "macOS has no Landlock: the solution runs with your user's rights")
    assert sandbox.die_with_parent() is False


def test_headers():
    full = sandbox.Protection(kind="landlock", abi=7, filesystem=True, network=True, signals=True)
    assert full.describe() == ("sandbox: Landlock ABI 7 (writes only in the grade's folder, no network, "
                               "no signals outside the grade)")
    ddp = sandbox.Protection(kind="landlock", abi=6, filesystem=True, network=True, signals=True,
                             tcp_ports=((0, 0), (32768, 60999)))
    assert "TCP only on ports 0, 32768-60999" in ddp.describe()
    old = sandbox.Protection(kind="landlock", abi=3, filesystem=True)
    assert old.describe() == ("sandbox: Landlock ABI 3 (writes only in the grade's folder, TCP not restricted "
                              "(needs Landlock ABI 4), signals not restricted (needs Landlock ABI 6))")
    assert json.loads(json.dumps(ddp.as_dict()))["tcp_ports"] == [[0, 0], [32768, 60999]]


def test_rights_by_abi():
    assert sandbox.handled_fs_rights(1) & sandbox.FS_REFER == 0
    assert sandbox.handled_fs_rights(2) & sandbox.FS_REFER
    assert sandbox.handled_fs_rights(3) & sandbox.FS_TRUNCATE
    assert sandbox.handled_fs_rights(4) == sandbox.handled_fs_rights(3)
    assert sandbox.handled_fs_rights(5) & sandbox.FS_IOCTL_DEV
    assert sandbox.handled_fs_rights(7) & sandbox.FS_RESOLVE_UNIX == 0


def process_gone(pid: int) -> bool:
    """Ended (reaped, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_that_asked_dies_with_its_parent():
    """grader -> child (asked), and a sibling that did not ask; the grader is SIGKILLed."""
    spawn = "subprocess.Popen([sys.executable, '-c', {!r}])"
    asked = PRELUDE + "sandbox.die_with_parent()\nprint('asked', flush=True)\ntime.sleep(60)"
    grader = ("import subprocess, sys, time\n"
              f"a = {spawn.format(asked)}\nb = {spawn.format('import time; time.sleep(60)')}\n"
              "print('pids', a.pid, b.pid, flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", grader], stdout=subprocess.PIPE, text=True, env=child_env())
    lines = [proc.stdout.readline().split(), proc.stdout.readline().split()]
    asked_pid, control_pid = next((int(w[1]), int(w[2])) for w in lines if w[0] == "pids")
    try:
        assert ["asked"] in lines
        assert not process_gone(asked_pid)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while not process_gone(asked_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_gone(asked_pid), "the child outlived the grader"
        assert not process_gone(control_pid), "the control child should have lived on"
    finally:
        for pid in (asked_pid, control_pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_parent_already_gone_ends_the_child_at_once():
    """The race: the parent died before the request, so no signal will ever come; the child ends itself."""
    out = subprocess.run([sys.executable, "-c", PRELUDE + "print(sandbox.die_with_parent(os.getppid()), flush=True)\n"
                          "sandbox.die_with_parent(os.getppid() + 1000000)\nprint('lived on')"],
                         capture_output=True, text=True, timeout=60, env=child_env())
    assert out.stdout == "True\n"
    assert out.returncode == -signal.SIGKILL
