"""The warm grader's server: `python -m quizapp.checking.zygote --control FD`. Child side (imports torch).

It pays once for what every grade's child pays at start (torch, `torch._dynamo`, the
instrumentation, every exercise's checks module), then forks one fresh child per grade; that child
runs `quizapp.checking.entry.main` exactly as a cold child would. The parent (`warm.py`) talks to it
over a Unix socket pair: a request carries the child's arguments, working folder and environment,
plus three descriptors: the grade's own socket (for the child's pid and its exit status), the
write end of the pipe that captures the child's output, and the child's end of the result
channel, which becomes its stdin (entry.py takes it from there). This process never reads the
channel: the key in it is for the child alone.

Why forking after `import torch` is safe here: a fork copies only the calling thread, so it is
unsafe when another thread holds a lock or owns state the copy needs. This process never runs a
tensor op, so torch's OpenMP and inter-op pools do not exist yet (they start on first use, in
the child); it never touches CUDA, so there is no driver context to inherit (the child's first
`torch.cuda.is_available()` initialises CUDA in the child); and OpenBLAS (loaded with numpy) is
told to start no threads of its own. Before every fork it checks that it still has exactly one
thread, and refuses the grade (the parent then grades cold) if not; and it tells the parent
whether the CUDA driver library got loaded after all (then grades that may use CUDA go cold).

Per grade it forks a keeper, which starts a session of its own (so the grade's process group is
the keeper's, not this server's) and forks the grade's child into it. A solution that kills its
parent, or its parent's process group, so kills only its own grade; this server lives on. The
keeper waits for the child, stops whatever the child left behind, reports the exit status, and
kills the rest of its group, itself included.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import select
import shutil
import signal
import socket
import sys
from pathlib import Path

from quizapp.checking.reaping import become_subreaper, stop_escaped

MAX_MESSAGE = 1024 * 1024  # a request holds the environment, which can be long
IDLE_SCAN_S = 5.0  # how long after a grade ends stray processes are still looked for


def send(sock: socket.socket, message: dict) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the parent gave up on this grade; nothing to tell


def thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1  # no /proc: nothing to count, and fork() there has no extra threads of ours


def cuda_driver_loaded() -> bool:
    """Whether the CUDA driver library is mapped into this process: once it is, a forked child's
    CUDA calls can fail, so the parent grades CUDA cold. Nothing here loads it; this makes sure."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            return any("libcuda.so" in line for line in fh)
    except OSError:
        return True  # cannot tell: assume the worst


def warm_up() -> dict[str, object]:
    """Import what a grade's child needs; returns the checks modules by exercise folder."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: no BLAS thread pool
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401 - the first optimizer step imports it otherwise
    import torch.profiler._cupti_monitor  # noqa: F401 - and the first backward this one

    from quizapp.catalog import load_catalog
    from quizapp.checking import entry, harness, instrument, loading  # noqa: F401

    preloaded = {}
    for exercise in load_catalog().values():
        checks = exercise.folder / "checks.py"
        try:
            module = loading.load_module(loading.CHECKS_MODULE, checks)
        except BaseException:  # noqa: BLE001 - a broken checks module is loaded, and reported, by the child
            continue
        finally:
            sys.modules.pop(loading.CHECKS_MODULE, None)
        preloaded[loading.checks_key(exercise.folder)] = module
    return preloaded


def source_fingerprint() -> tuple:
    """The sizes and times of the grader's and the exercises' Python files: a change means this
    process holds stale code, and it steps down."""
    from quizapp import paths

    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + sorted(paths.shipped_exercises_dir().glob("*/*.py"))
    out = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(out)


def reap() -> set[int]:
    """Reap every child that has ended; returns their pids."""
    done = set()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.add(pid)


class Server:
    def __init__(self, control: socket.socket, preloaded: dict):
        self.control = control
        self.preloaded = preloaded
        self.fingerprint = source_fingerprint()
        self.keepers: set[int] = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.scan_until = 0.0

    def serve(self) -> None:
        import time

        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select()
        send(self.control, {"ready": True, "pid": os.getpid(), "threads": thread_count(),
                            "cuda_fork_safe": not cuda_driver_loaded()})
        while True:
            ready, _, _ = select.select([self.control, self.wake_r], [], [], 1.0)
            if self.wake_r in ready:
                self._drain_wakeups()
            ended = reap()
            if ended & self.keepers:
                self.keepers -= ended
                self.scan_until = time.monotonic() + IDLE_SCAN_S
            if time.monotonic() < self.scan_until:
                stop_escaped(self.keepers)  # what a killed grade left behind came to us
            if self.control in ready:
                outcome = self._request()
                if outcome == "gone":
                    self.shutdown()  # nobody is left to read these grades
                    return
                if outcome == "step down":
                    return  # running grades go on: each keeper reports to its parent directly

    def _drain_wakeups(self) -> None:
        try:
            while os.read(self.wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _request(self) -> str:
        """Serve one request: "ok", "gone" (the parent closed its end, or died) or "step down"."""
        try:
            data, fds, _, _ = socket.recv_fds(self.control, MAX_MESSAGE, 4)
        except OSError:
            return "gone"
        if not data:
            return "gone"
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return "ok"
        grade_sock, output, channel = socket.socket(fileno=fds[0]), fds[1], fds[2]
        try:
            request = json.loads(data)
            if source_fingerprint() != self.fingerprint:
                send(grade_sock, {"refused": "the grader's or an exercise's code changed since this process started"})
                return "step down"
            if thread_count() != 1:
                send(grade_sock, {"refused": f"{thread_count()} threads; forking now is not safe"})
                return "step down"
            pid = os.fork()
            if pid == 0:
                try:
                    self._keeper(request, grade_sock, output, channel)
                finally:
                    os._exit(70)
            self.keepers.add(pid)
            return "ok"
        finally:
            grade_sock.close()
            os.close(output)
            os.close(channel)

    def _keeper(self, request: dict, grade_sock: socket.socket, output: int, channel: int) -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.control.close()
        os.close(self.wake_r)
        os.close(self.wake_w)
        os.setsid()
        become_subreaper()  # not inherited across fork: this keeper's own
        pid = os.fork()
        if pid == 0:
            try:
                grade_sock.close()
                run_grade_child(request, output, channel, self.preloaded)
            finally:
                os._exit(70)
        os.close(output)
        os.close(channel)
        send(grade_sock, {"pid": pid, "pgid": os.getpid()})
        code = None
        while code is None:
            try:
                ended, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if ended == pid:
                code = os.waitstatus_to_exitcode(status)
        stop_escaped(set())  # what the child started and left behind, in this group or not
        if request.get("clear_shm") is True:
            clear_shm()
        send(grade_sock, {"exit": code})
        os.killpg(0, signal.SIGKILL)  # the rest of the group, this keeper included

    def shutdown(self) -> None:
        for pgid in self.keepers:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reap()


def clear_shm() -> None:
    """Empty /dev/shm: a private tmpfs of this zygote's namespaces (the parent asks only then), which
    the grade that just ended may have written for the next one to find."""
    for entry in os.scandir("/dev/shm"):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass  # a name the grade made unremovable is still gone with the namespace


def run_grade_child(request: dict, output: int, channel: int, preloaded: dict) -> None:
    """In the forked child: take the grade's folder, output, result channel (as stdin, as a cold
    child has it) and environment, then grade as cold."""
    os.dup2(channel, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(channel)
    os.close(output)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    import tempfile

    tempfile.tempdir = None  # read TMPDIR again: the grade's own temp folder, the one its sandbox lets it write
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Fresh streams on the new descriptors, unbuffered as the cold child's (PYTHONUNBUFFERED).
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace")
    from quizapp.checking import entry, loading

    loading.PRELOADED.update(preloaded)
    sys.argv = [entry.__file__, *request["args"]]
    entry.main(request["args"])  # ends the process with os._exit


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--control", type=int, required=True)
    args = parser.parse_args(argv)
    sys.dont_write_bytecode = True  # as the cold child: no __pycache__ in the exercises' folders
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when this process ends
    control = socket.socket(fileno=args.control)
    try:
        preloaded = warm_up()
    except BaseException as exc:  # noqa: BLE001 - say why, and let the parent grade cold
        send(control, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    become_subreaper()
    Server(control, preloaded).serve()
    # No interpreter teardown: unloading torch takes most of a second, and nothing here needs flushing
    # (output goes nowhere); the parent waits for this exit when it closes the grader.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
