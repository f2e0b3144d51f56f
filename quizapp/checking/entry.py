"""Child side entry point: `python -m quizapp.checking.entry`. Runs in the solution's own process.

Results go back over a channel of their own (never stdout) that the solution's code can neither
find in any ordinary way nor forge. The parent gives the child one end of a socket as its stdin,
with a key for this grade written in it first. Before anything of the solution is imported, the
child reads the key, moves the socket to a random high descriptor that no program it starts
inherits, and puts /dev/null on stdin: nothing names the channel in argv or the environment. Each
event is one line, the HMAC-SHA256 of its body under the key and then the body (JSON with a
sequence number); the key lives only in the closure of the function that writes them. The last
event is {"event": "done"}; its absence tells the parent the process was cut short (os._exit, a
crash, a kill).
"""

from __future__ import annotations

import argparse
import hmac
import itertools
import json
import os
import secrets
import select
import sys
import warnings
from pathlib import Path
from typing import Callable

from quizapp.checking.loading import (
    checks_module,
    describe_exception,
    describe_load_error,
    frames_below,
    load_module,
    safe_str,
)
from quizapp.checking.protocol import HELLO as CHANNEL_HELLO
from quizapp.checking.protocol import KEY_BYTES, capped, extra_writable

HELLO_TIMEOUT_S = 30.0
TMP_ENV = "TMPDIR"  # the grade's own temp folder, set by the runner: writable inside the sandbox

Emit = Callable[..., None]


# -- the result channel ----------------------------------------------------------------------

def open_channel(fd: int = 0) -> Emit | None:
    """Take the channel from `fd` (stdin): read the key, hide the socket, and return the function
    that writes signed events to it; None when `fd` does not carry a grade's channel."""
    hello = _read_exactly(fd, len(CHANNEL_HELLO) + KEY_BYTES, HELLO_TIMEOUT_S)
    if hello is None or not hello.startswith(CHANNEL_HELLO):
        return None
    channel = _hide(fd)
    return _signer(channel, hello[len(CHANNEL_HELLO):])


def _read_exactly(fd: int, n: int, timeout: float) -> bytes | None:
    data = b""
    while len(data) < n:
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            chunk = os.read(fd, n - len(data)) if ready else b""
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def _hide(fd: int) -> int:
    """Move `fd` to a random descriptor number above the usual ones, closed on exec (a program the
    solution starts does not get it), and put /dev/null where it was."""
    import fcntl
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = 4096 if soft == resource.RLIM_INFINITY or soft < 0 else min(soft, 4096)
    low = min(256, top // 2)
    dup_cloexec = getattr(fcntl, "F_DUPFD_CLOEXEC", None)
    if dup_cloexec is not None:
        moved = fcntl.fcntl(fd, dup_cloexec, low + secrets.randbelow(top - low))
    else:  # a platform without F_DUPFD_CLOEXEC
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, low + secrets.randbelow(top - low))
        os.set_inheritable(moved, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return moved


def _signer(fd: int, key: bytes) -> Emit:
    """The function that writes one signed event per call. It keeps the key, the descriptor and the
    sequence number to itself, and holds on to the functions it calls, so that a solution replacing
    json.dumps or os.write later changes nothing here."""
    dumps, digest, write = json.dumps, hmac.digest, os.write
    sequence = itertools.count()

    def emit(event: str, **payload) -> None:
        body = dumps({"seq": next(sequence), "event": event, **payload}, default=str).encode()
        view = memoryview(digest(key, body, "sha256").hex().encode() + b" " + body + b"\n")
        while view:
            view = view[write(fd, view):]

    return emit


def main(argv=None) -> int:
    from quizapp.checking.sandbox import die_with_parent

    die_with_parent()  # a grader killed or hung up takes its grade with it, time limit and all
    emit = open_channel()  # first: nothing of the solution has run yet
    if emit is None:
        print("quizapp.checking.entry: stdin does not carry a grade's result channel; "
              "the grader starts this module itself", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser()
    parser.add_argument("--exercise-dir", required=True)
    parser.add_argument("--solution", required=True)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--memory-mb", type=int, default=0)
    args = parser.parse_args(argv)
    sys.dont_write_bytecode = True  # no __pycache__ next to the learner's file
    try:
        run(args, emit)
    except BaseException as exc:  # noqa: BLE001 - the grader must report, never crash
        try:
            emit("error", message=f"internal grader error: {describe_exception(exc, args.solution)}")
        except BaseException:  # noqa: BLE001 - the channel itself is gone: the parent sees no "done"
            os._exit(3)
    try:
        emit("done")
    except BaseException:  # noqa: BLE001 - as above
        os._exit(3)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a solution's atexit handlers or threads must not hang the grade.
    os._exit(0)


def run(args, emit: Emit) -> None:
    warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
    try:
        import torch
    except ImportError as exc:
        emit("error", message=f"torch is not installed in this Python ({sys.executable}): {exc}")
        return
    from quizapp.checking import instrument
    from quizapp.checking.harness import (
        FOREIGN_SKIP,
        CheckFailed,
        CheckSkipped,
        Context,
        error_inputs,
        signature_problem,
        skip_is_the_checks,
    )

    if args.device == "cuda" and not torch.cuda.is_available():
        emit("usage_error", message="--device cuda: CUDA is not available on this machine")
        return
    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    if device.type == "cpu":
        # The checks' models are tiny: a second intra-op thread buys nothing on them, and where the
        # cores are busy (two grades at once, other work) its spin-waits made grades many times slower.
        torch.set_num_threads(1)
    if args.memory_mb and device.type == "cpu":
        import resource

        limit = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    limit_files_and_processes()

    exercise_dir = Path(args.exercise_dir)
    checks = checks_module(exercise_dir)
    instrument.install()
    reference = load_module("quizapp_reference", exercise_dir / "reference.py")
    source = Path(args.solution).read_bytes()
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = source.count(b"\n", 0, exc.start) + 1
        emit("error", message=f"the solution is not UTF-8 text: byte 0x{source[exc.start]:02x} on line {line}; "
                              "save the file as UTF-8")
        return
    protection = enter_sandbox(checks)  # everything trusted is loaded: from here on, the learner's code
    try:
        solution = load_module("solution", Path(args.solution))
    except BaseException as exc:  # noqa: BLE001 - any failure to import is the learner's to see
        emit("error", message=describe_load_error(exc, args.solution), sandbox=protection.describe())
        return
    spec = checks.CHECKS
    problems = [p for req in spec.required if (p := signature_problem(getattr(solution, req.name, None), req))]
    if problems:
        emit("error", message=capped("\n".join(problems)), sandbox=protection.describe())
        return

    emit("start", device=device.type, torch=torch.__version__, sandbox=protection.describe(),
         checks=[{"id": c.id, "title": c.title} for c in spec.checks])
    ctx = Context(solution, reference, device, exercise_dir)
    for check in spec.checks:
        ctx.data = {}
        try:
            instrument.reset_torch_state()
            instrument.LOG.reset(device.type)
            check.run(ctx)
            status, message = "pass", ""
        except CheckFailed as exc:
            status, message = "fail", safe_str(exc)
        except CheckSkipped as exc:
            if skip_is_the_checks(exc, checks):
                status, message = "skip", safe_str(exc)
            else:  # the solution raised it, or called the harness's skip()
                status, message = "error", FOREIGN_SKIP + frames_below(exc, args.solution)
        except BaseException as exc:  # noqa: BLE001 - an error in the solution is a check error
            status, message = "error", error_inputs(exc) + describe_exception(exc, args.solution)
        message = capped(message)
        try:
            emit("check", id=check.id, title=check.title, status=status, message=message,
                 data=finite_only(ctx.data))
        except (TypeError, ValueError):  # data that does not serialise: the verdict still goes
            emit("check", id=check.id, title=check.title, status=status, message=message, data={})


FILE_SIZE_CAP = 1 << 30  # bytes one file of the grade may reach: a checkpoint of the checks' models is kilobytes
PROCESSES_ABOVE_NOW = 512  # processes the grade may add to the user's count (DDP starts a few)


def limit_files_and_processes() -> None:
    """Cap the size of a file the grade writes and the processes it may start, so a runaway write or
    a fork bomb fails inside the grade instead of filling the disk or the process table. A write past
    the cap fails with EFBIG (an OSError the learner sees) instead of killing the process."""
    try:
        import resource
        import signal
    except ImportError:  # not a POSIX system: nothing to set
        return
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _lower(resource, resource.RLIMIT_FSIZE, FILE_SIZE_CAP)
    if hasattr(resource, "RLIMIT_NPROC") and Path("/proc").is_dir():
        # The limit counts every process of the user, the learner's shell and editor included.
        _lower(resource, resource.RLIMIT_NPROC, _processes_of_this_user() + PROCESSES_ABOVE_NOW)


def _lower(resource, which: int, wanted: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        try:
            resource.setrlimit(which, (wanted, hard))
        except (ValueError, OSError):
            pass  # a limit we may not set is one the system already keeps


def _processes_of_this_user() -> int:
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            count += entry.stat().st_uid == uid
        except OSError:
            continue
    return count


def enter_sandbox(checks):
    """Restrict this process (and all it starts) before the solution is imported: writes only in the
    grade's folder and its temp folder, no TCP unless the exercise's checks say they need local ports
    (DDP's gloo ranks: NEEDS_LOCAL_TCP), no signals outside the grade. Returns what is in force."""
    from quizapp.checking import sandbox

    writable = [Path(os.environ[TMP_ENV])] if os.path.isdir(os.environ.get(TMP_ENV, "")) else []
    # Folders the grader's caller lets every grade write (the test suite's temp folder, where its
    # solutions leave their pids); set in the grader's environment, out of the solution's reach.
    writable += extra_writable(os.environ)
    tcp = sandbox.ephemeral_tcp_ports() if getattr(checks, "NEEDS_LOCAL_TCP", False) else None
    return sandbox.apply(Path.cwd(), writable=writable, allow_tcp_ports=tcp)


def finite_only(value):
    """NaN and inf become None, so every event line is strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: finite_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_only(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main())
