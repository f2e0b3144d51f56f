"""Kernel containment of a cold grade: bubblewrap (bwrap), where it is installed and the kernel lets
it make namespaces without privileges.

The grade's child runs in namespaces of its own, made by bwrap before our Python starts:

- a PID namespace: every process of the grade, whatever it forks or `setsid`s, dies when the grade
  ends (the kernel kills a namespace's processes when its first process ends);
- a mount namespace where everything is read-only but the grade's folder (and the folders the
  caller lets every grade write): chmod, utime, xattrs and writes fail outside it, whatever Landlock
  knows of them; with a private, empty /dev/shm that goes with the grade;
- a network namespace with loopback only (DDP's ranks meet there), and an IPC namespace;
- a user namespace with no capabilities at all.

Landlock (sandbox.py) still applies inside, in the child, as a second layer and as the only one
where bwrap is missing or refused (macOS, a kernel without unprivileged user namespaces). The
warm grader's zygote starts inside the same namespaces but the PID one (a fork cannot be wrapped
afresh, and the pids it reports must mean the same on our side): its grades' folders live under one
folder of its own, and what a warm grade leaves running is swept by its keeper. The report's
sandbox line says which layers were in force.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

OFF_ENV = "QUIZAPP_NO_BWRAP"  # set (to anything) to grade with Landlock alone
PROBE_TIMEOUT_S = 20.0
# Devices CUDA and ROCm open, passed through when the machine has them.
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")
DESCRIPTION = ("bubblewrap (own processes, read-only files outside the grade's folder, "
               "a private /dev/shm, loopback-only network)")
# A warm grade runs in its zygote's namespaces: all but the PID namespace (see `options`).
WARM_DESCRIPTION = ("bubblewrap (read-only files outside the grades' folders, a private /dev/shm, "
                    "loopback-only network)")


def bwrap_path() -> str | None:
    if os.environ.get(OFF_ENV) or not sys.platform.startswith("linux"):
        return None
    return shutil.which("bwrap")


def options(writable: Iterable[Path], cwd: Path | None = None, *, own_pids: bool = True,
            hidden: Iterable[Path] = ()) -> list[str]:
    """bwrap's options for a grade that may write in `writable` only, starting in `cwd`. Without
    `own_pids` (the warm grader's zygote) the processes stay in our PID namespace: the pids the
    zygote reports must mean the same on both sides, and its keepers sweep what a grade leaves.

    `hidden`: paths the grade must not read (a class's other submissions, the teacher's results): a
    folder is covered by an empty tmpfs, a file by /dev/null, even inside a `writable` folder; a
    `writable` folder beneath a hidden one shows through."""
    opts = ["--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm"]
    if own_pids:
        opts += ["--unshare-pid", "--proc", "/proc"]
    for pattern in GPU_DEVICES:
        for device in sorted(glob.glob(pattern)):
            opts += ["--dev-bind-try", device, device]
    # Mounts stack in order: a writable folder above a hidden path is bound first (the hidden path then
    # covers its part of it), one beneath a hidden path last (it shows through).
    hidden, writable = list(hidden), list(writable)
    beneath = [f for f in writable if any(f != h and f.is_relative_to(h) for h in hidden)]
    for folder in (f for f in writable if f not in beneath):
        opts += ["--bind", str(folder), str(folder)]
    for path in hidden:
        if path.is_dir():
            opts += ["--tmpfs", str(path)]
        elif path.exists():
            opts += ["--ro-bind", "/dev/null", str(path)]
    for folder in beneath:
        opts += ["--bind", str(folder), str(folder)]
    return [*opts, "--chdir", str(cwd)] if cwd is not None else opts


def describe(*, own_pids: bool = True) -> str:
    """The report's words for what the namespaces stop."""
    return DESCRIPTION if own_pids else WARM_DESCRIPTION


def refused() -> str | None:
    """Why bwrap cannot contain grades on this machine, or None when it can."""
    if not sys.platform.startswith("linux"):
        return "no bubblewrap on this OS"
    if os.environ.get(OFF_ENV):
        return f"turned off by {OFF_ENV}"
    bwrap = bwrap_path()
    return "bubblewrap is not installed" if bwrap is None else _probe(bwrap)


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Start bwrap once as a grade would; why it failed, or None (once per process: it costs a start)."""
    probe = Path(os.environ.get("TMPDIR") or "/tmp")
    try:
        # `true` where there is one: the namespaces are what is tried, and a Python start costs 10x more.
        done = subprocess.run([bwrap, *options([], probe), *([shutil.which("true")] if shutil.which("true")
                                                             else [sys.executable, "-c", "pass"])],
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not start ({exc})"
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bubblewrap was refused here ({why[:200]})"
    return None


def wrap(argv: list[str], writable: Iterable[Path], cwd: Path | None = None, *,
         own_pids: bool = True, hidden: Iterable[Path] = ()) -> list[str] | None:
    """`argv` run inside bwrap's namespaces, or None where bwrap cannot be used (then run it as it is)."""
    if refused() is not None:
        return None
    return [bwrap_path(), *options(writable, cwd, own_pids=own_pids, hidden=hidden), *argv]


def exit_signal(returncode: int) -> int | None:
    """The signal that killed the child inside bwrap, which reports it as 128 + signal (as a shell does)."""
    return returncode - 128 if 128 < returncode < 128 + 65 else None
