"""Multi-rank exercises (ddp_accumulation, debug_ddp_sync_flag): start the ranks from the grade's
child process, watch them, collect what they saw.

The launcher is shared; what each rank does is the exercise's own: `rank.py` in the exercise folder
(`exercise_dir`), with `serve(rank, world, init, backend, device, load_solution, solution_path,
exercise_dir, out, collective_timeout) -> exit status` for a forked rank and a command line (`--rank
--world --init --backend --device --solution --exercise-dir --out --collective-timeout`) for a
spawned one. A rank writes `r{rank}-started.json` ({"run": index}) as each run starts, one
`r{rank}-{index}.json` record per run, and `r{rank}-error.json` ({"stage", "run", "message"}) on
the first error.

One launch of WORLD ranks makes every run. The ranks are forked from the child (or spawned where
CUDA is in use) and stay in the child's process group, so the grade's own limits (timeout, the
group killed at the end) cover them too. Here, on top of that: a rank that dies or is stuck at a
collective the other never reaches ends the launch within seconds, with the rank and run named.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from quizapp.checking.harness import sibling_module

COLLECTIVE_TIMEOUT_S = 10.0  # a rank waiting this long at an all-reduce gives up with an error
LAUNCH_TIMEOUT_S = 75.0      # the whole launch, torch imports included; under the grade's 120 s
GRACE_S = 3.0                # after one rank ends, how long the other may take to finish too
POLL_S = 0.02


class RankFailure(Exception):
    """A rank could not make a run: the learner's error there, a dead rank, or a stuck collective."""


@dataclass
class Launch:
    """What the ranks recorded: records[rank][run index], and why the launch stopped early, if it did."""

    records: list[dict[int, dict]]
    stopped: str | None = None
    stopped_at: int | None = None  # the run index that failed; later runs never started
    backend: str = "gloo"

    def run(self, index: int, label: str) -> list[dict]:
        """Every rank's record of run `index`, or RankFailure saying why there is none."""
        if all(index in per_rank for per_rank in self.records):
            return [per_rank[index] for per_rank in self.records]
        if self.stopped_at is not None and 0 <= self.stopped_at < index:
            raise RankFailure(f"run {label} did not start, an earlier run failed: {self.stopped}")
        raise RankFailure(self.stopped or f"run {label}: a rank did not record it")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def choose_backend(device_type: str, world: int, cuda_count: int) -> tuple[str, list[str]]:
    """nccl with one GPU per rank where there are enough GPUs; gloo on the CPU otherwise."""
    if device_type == "cuda" and cuda_count >= world:
        return "nccl", [f"cuda:{r}" for r in range(world)]
    return "gloo", ["cpu"] * world


def launch(exercise_dir: Path, solution, *, world: int, backend: str, devices: list[str], runs: list[str],
           fork: bool) -> Launch:
    """Run every run on `world` ranks; one retry if a rank could not join (the port was taken).

    `solution` is the learner's module, already imported here. With `fork`, the ranks are forked
    from this process and use it as it is: no second torch import, which is most of a rank's start.
    Otherwise (CUDA: a CUDA context does not survive a fork) each rank is a fresh interpreter.
    """
    result = _launch_once(exercise_dir, solution, world, backend, devices, runs, fork)
    if result.stopped and "could not join" in result.stopped:
        result = _launch_once(exercise_dir, solution, world, backend, devices, runs, fork)
    return result


class _Forked:
    """A forked rank, with the part of Popen's interface the launcher uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig):
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self):
        while self.poll() is None:
            time.sleep(POLL_S)
        return self.returncode


def _fork_rank(rank_module, rank, world, init, backend, device, solution, exercise_dir, out) -> _Forked:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the rank: whatever happens, it never returns into the grader's code
        status = 1
        try:
            status = rank_module.serve(rank, world, init, backend, device, lambda: solution, solution.__file__,
                                       exercise_dir, out, COLLECTIVE_TIMEOUT_S)
        finally:
            os._exit(status)
    return _Forked(pid)


def _launch_once(exercise_dir, solution, world, backend, devices, runs, fork) -> Launch:
    out = Path(tempfile.mkdtemp(prefix="quizapp-ddp-"))
    # Loopback only: the ranks share this machine, and gloo would otherwise pick an interface by hostname.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    init = f"tcp://127.0.0.1:{free_port()}"
    procs = []
    try:
        if fork:
            rank_module = sibling_module(str(exercise_dir / "rank.py"), "rank")  # the exercise's own rank.py
        for rank in range(world):
            if fork:
                procs.append(_fork_rank(rank_module, rank, world, init, backend, devices[rank], solution,
                                        exercise_dir, out))
                continue
            cmd = [sys.executable, "-B", str(exercise_dir / "rank.py"), "--rank", str(rank), "--world", str(world),
                   "--init", init, "--backend", backend, "--device", devices[rank],
                   "--solution", str(solution.__file__), "--exercise-dir", str(exercise_dir), "--out", str(out),
                   "--collective-timeout", str(COLLECTIVE_TIMEOUT_S)]
            procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env))
        stopped = _supervise(procs, out, runs)
        codes = [p.poll() for p in procs]
        return _collect(out, world, runs, stopped, codes, backend)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait()
        shutil.rmtree(out, ignore_errors=True)


def _supervise(procs, out: Path, runs: list[str]) -> str | None:
    """Wait for every rank; a reason string if the launch had to be cut short."""
    started = time.monotonic()
    first_end = None
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            return None
        now = time.monotonic()
        if first_end is None and any(c is not None for c in codes):
            first_end = now
        if first_end is not None and now - first_end > GRACE_S:
            ended = [r for r, c in enumerate(codes) if c is not None]
            waiting = [r for r, c in enumerate(codes) if c is None]
            where = _where(out, waiting[0], runs)
            return (f"rank {ended[0]} ended (exit code {codes[ended[0]]}) while rank {waiting[0]} was still "
                    f"running{where} {GRACE_S:g} s later, waiting at a collective the ended rank will never "
                    f"reach; it was stopped")
        if now - started > LAUNCH_TIMEOUT_S:
            where = "; ".join(f"rank {r}{_where(out, r, runs)}" for r in range(len(procs)))
            return (f"the {len(procs)} ranks had not finished after {LAUNCH_TIMEOUT_S:g} s ({where}); "
                    f"they were stopped")
        time.sleep(POLL_S)


def _where(out: Path, rank: int, runs: list[str]) -> str:
    info = _read(out / f"r{rank}-started.json")
    if info is None or not isinstance(info.get("run"), int) or not 0 <= info["run"] < len(runs):
        return " (before its first run)"
    return f" (in run {runs[info['run']]})"


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _collect(out: Path, world: int, runs: list[str], stopped: str | None, codes: list[int | None],
             backend: str) -> Launch:
    records: list[dict[int, dict]] = []
    for rank in range(world):
        mine = {}
        for index in range(len(runs)):
            record = _read(out / f"r{rank}-{index}.json")
            if record is not None:
                mine[index] = record
        records.append(mine)
    errors = {rank: err for rank in range(world) if (err := _read(out / f"r{rank}-error.json"))}
    launch = Launch(records, backend=backend)
    # A rank that vanished without an error file ended the process itself (os._exit) or was killed;
    # codes were read before the launcher stopped anyone, so a rank it stopped is not counted here.
    vanished = [r for r in range(world) if r not in errors and codes[r] is not None and len(records[r]) < len(runs)]
    causes = [r for r in errors if not _is_echo(str(errors[r].get("message", "")))]
    if causes:
        rank = causes[0]
        err = errors[rank]
        message = str(err.get("message", "no message"))
        index = err.get("run")
        where = f" in run {runs[index]}" if isinstance(index, int) and 0 <= index < len(runs) else ""
        if err.get("stage") == "init":
            launch.stopped = f"rank {rank} could not join the process group ({backend}): {message}"
        else:
            launch.stopped = f"rank {rank}{where}: {message}"
        launch.stopped_at = index if isinstance(index, int) else -1
    elif vanished:
        rank = vanished[0]
        code = codes[rank]
        if code == -signal.SIGABRT:
            # gloo's C++ code aborts the whole process when the bytes a peer sends do not fit the collective
            # this rank is in: a collective issued on some ranks only, or with other shapes or another op.
            how = ("was aborted (SIGABRT), as gloo aborts a rank whose collective does not match its peer's: a "
                   "collective issued on some ranks only, or with another shape, dtype or op on each (what gloo "
                   "said is in your code's output)")
        elif code < 0:
            how = f"was killed by signal {-code}"
        else:
            how = f"ended its process early (exit code {code}), e.g. with os._exit(); a solution must return, not exit"
        launch.stopped = f"rank {rank}{_where(out, rank, runs)} {how}; the other rank was left waiting and was stopped"
        launch.stopped_at = len(records[rank])
    elif errors:
        rank, err = next(iter(errors.items()))
        message = str(err.get("message", "no message"))
        index = err.get("run")
        where = f" in run {runs[index]}" if isinstance(index, int) and 0 <= index < len(runs) else ""
        # gloo prefixes its own source path ("[.../unbound_buffer.cc:78] Timed out ..."): keep the words.
        detail = message.splitlines()[0].rsplit("] ", 1)[-1] if message else "no message"
        launch.stopped = (f"rank {rank}{where} waited at a collective (DDP's all-reduce) that the other rank "
                          f"never reached, and gave up after {COLLECTIVE_TIMEOUT_S:g} s; every rank must run the "
                          f"same forwards and backwards with the same no_sync pattern ({detail})")
        launch.stopped_at = index if isinstance(index, int) else -1
    elif stopped is not None:
        launch.stopped = stopped
        launch.stopped_at = min(len(r) for r in records)
    return launch


def _is_echo(message: str) -> bool:
    """A collective that failed because of the peer (gloo/nccl timed out or lost the connection),
    not an error of this rank's own."""
    text = message.lower()
    return any(s in text for s in ("timed out waiting", "connection closed by peer", "connection reset by peer",
                                   "broken pipe", "/gloo/", "nccl error", "watchdog"))
