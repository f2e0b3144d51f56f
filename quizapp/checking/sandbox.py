"""The grade's child sandbox: what the OS gives without privileges, applied to the calling process.

On Linux this is Landlock, through a small ctypes layer over its three system calls, plus prctl;
where the kernel has no Landlock (macOS, Linux before 5.13, Landlock left out at boot) nothing is
restricted and the returned `Protection` says so. No torch here: the child calls `apply` after
importing torch and the checks, right before importing the learner's code.

Landlock, in the kernel's own words: https://docs.kernel.org/userspace-api/landlock.html
(the values below are those of include/uapi/linux/landlock.h). What each ABI level adds here:

  1 (Linux 5.13)  filesystem: every write-type right handled, granted only beneath the grade's folders
  2 (5.19)        REFER: renames and links across folders (under ABI 1 they are always denied)
  3 (6.2)         TRUNCATE
  4 (6.7)         TCP bind and connect, by port (not by address: "localhost only" cannot be said)
  5 (6.10)        IOCTL_DEV: ioctls on devices opened from now on (granted on GPU devices only)
  6 (6.12)        scopes: no signals to, no abstract Unix sockets of, processes outside the sandbox
  7 (6.15)        audit-log flags: nothing to use here
  8               TSYNC: every thread of the process is restricted, not only the calling one
  9               RESOLVE_UNIX: no connecting to pathname Unix sockets outside the writable folders

ABI 8 and 9 are used as the header describes them; this module was tested up to ABI 7, and where a
kernel refuses what it asks for (EINVAL), it falls back to ABI 7's ruleset rather than to nothing.

Landlock binds the calling thread and everything it forks or execs from then on, for good. It
applies to root too (it is not a permission-bit check), and it never stops a descriptor that was
open before it. Opening another process's /proc/<pid>/fd/N is denied for any process outside the
sandbox, whatever the file is (Landlock's ptrace rule, ABI 1).
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import functools
import os
import platform
import signal
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from quizapp.words import plural

# landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: 444, 445, 446 on every
# architecture listed (asm-generic/unistd.h for aarch64 and the others, x86's own tables agree).
_LANDLOCK_SYSCALLS = (444, 445, 446)
_ARCHITECTURES = {"x86_64", "aarch64", "arm64", "i386", "i686", "armv7l", "armv8l", "riscv64", "ppc64le",
                  "ppc64", "s390x", "loongarch64"}

_TESTED_ABI = 7  # the newest Landlock ABI this module was tested on (ABI 8 and 9 below are from the header)
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_RESTRICT_SELF_TSYNC = 1 << 3  # ABI 8

# Filesystem rights (LANDLOCK_ACCESS_FS_*). Reading and executing are never handled: torch must import.
FS_WRITE_FILE = 1 << 1
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
FS_RESOLVE_UNIX = 1 << 16  # ABI 9

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_FS_RIGHTS_SINCE = {
    1: (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK
        | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM),
    2: FS_REFER,
    3: FS_TRUNCATE,
    5: FS_IOCTL_DEV,
    9: FS_RESOLVE_UNIX,
}
# A rule on a file (not a folder) may carry only these; the kernel refuses the others there.
_FILE_RIGHTS = FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
_DEVICE_RIGHTS = FS_WRITE_FILE | FS_IOCTL_DEV

# Writable besides the grade's folders: /dev/shm, where torch's shared tensors and Python's
# multiprocessing locks and queues live; /dev/null (open(os.devnull, "w") truncates it); GPU
# devices, which CUDA and ROCm open for writing and drive with ioctls.
_SHARED_DIRS = ("/dev/shm",)
_NULL_DEVICE = "/dev/null"
_GPU_DEVICES = ("nvidia*", "kfd")
_GPU_DEVICE_DIRS = ("/dev/nvidia-caps", "/dev/dri")

_PR_CAPBSET_DROP = 24
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_CAPABILITY_VERSION_3 = 0x20080522

_UNPROTECTED = "the solution runs with your user's rights"


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@dataclass(frozen=True)
class Protection:
    """What the sandbox put in force on this process and on all it starts from now on."""

    kind: str  # "landlock" or "none"
    abi: int = 0
    filesystem: bool = False  # writes only in the grade's folders
    network: bool = False  # TCP restricted: only `tcp_ports`, or none at all
    signals: bool = False  # no signals, and no abstract Unix sockets, outside the grade
    tcp_ports: tuple[tuple[int, int], ...] = ()  # allowed ports, as inclusive ranges
    note: str = ""

    def describe(self) -> str:
        """One line for the grade's header."""
        if self.kind != "landlock":
            return f"sandbox: none ({self.note})" if self.note else "sandbox: none"
        parts = ["writes only in the grade's folder" if self.filesystem else "writes not restricted"]
        if self.network:
            ports = ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.tcp_ports)
            parts.append(f"TCP only on ports {ports}" if ports else "no network")
        elif self.abi >= 4:
            parts.append("TCP open for this exercise")
        else:
            parts.append("TCP not restricted (needs Landlock ABI 4)")
        parts.append("no signals outside the grade" if self.signals
                     else "signals not restricted (needs Landlock ABI 6)")
        line = f"sandbox: Landlock ABI {self.abi} ({', '.join(parts)})"
        return f"{line}; {self.note}" if self.note else line

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _checked(result: int) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _syscall(number: int, *args) -> int:
    return _checked(_libc().syscall(ctypes.c_long(number), *args))


def _prctl(option: int, value: int) -> None:
    _checked(_libc().prctl(option, value, 0, 0, 0))


def landlock_abi() -> tuple[int, str]:
    """The kernel's Landlock ABI version, or 0 and why there is none. Restricts nothing."""
    if not sys.platform.startswith("linux"):
        system = {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, sys.platform)
        return 0, f"{system} has no Landlock: {_UNPROTECTED}"
    if platform.machine() not in _ARCHITECTURES:
        return 0, f"Landlock is not wired for this CPU ({platform.machine()}): {_UNPROTECTED}"
    try:
        return _syscall(_LANDLOCK_SYSCALLS[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)), ""
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return 0, f"this kernel has no Landlock (Linux 5.13 or later has it): {_UNPROTECTED}"
        if exc.errno == errno.EOPNOTSUPP:
            return 0, f"Landlock is built into this kernel but not enabled at boot: {_UNPROTECTED}"
        return 0, f"Landlock is not available here ({exc.strerror}): {_UNPROTECTED}"


def handled_fs_rights(abi: int) -> int:
    """Every write-type filesystem right that Landlock ABI `abi` knows."""
    return sum(bits for since, bits in _FS_RIGHTS_SINCE.items() if abi >= since)


def ephemeral_tcp_ports() -> list[int]:
    """Port 0 and the kernel's ephemeral range: what DDP's gloo (and nccl's bootstrap) ranks bind and
    connect to on one machine, while well-known ports (web, ssh, databases) stay closed."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as fh:
            low, high = (int(v) for v in fh.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # the kernel's default
    return [0, *range(low, high + 1)]


def apply(work_dir: Path, *, writable: Iterable[Path] = (), allow_tcp_ports: Iterable[int] | None = None,
          allow_all_tcp: bool = False) -> Protection:
    """Restrict this process and all it starts from now on, for good; returns what is in force.

    Writes only beneath `work_dir`, `writable`, /dev/shm, /dev/null and GPU devices; TCP bind and
    connect only on `allow_tcp_ports` (None: no TCP; port 0: binding to an ephemeral port), or not
    restricted with `allow_all_tcp`. Never raises for what the kernel lacks; a missing `work_dir`
    or `writable` path is the caller's error (FileNotFoundError). /tmp is not writable: point
    TMPDIR (and `tempfile.tempdir`) beneath `work_dir`, or pass the grade's temp folder in `writable`.
    """
    folders = [Path(work_dir), *(Path(p) for p in writable)]
    for folder in folders:
        if not folder.exists():
            raise FileNotFoundError(errno.ENOENT, "the sandbox cannot let a solution write to a missing path",
                                    str(folder))
    ports = sorted({_port(p) for p in allow_tcp_ports}) if allow_tcp_ports is not None and not allow_all_tcp else []
    abi, why = landlock_abi()
    if abi < 1:
        return Protection(kind="none", note=why)
    try:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)  # landlock_restrict_self requires it without CAP_SYS_ADMIN
        protection = _restrict(abi, folders, ports, allow_all_tcp)
    except OSError as exc:
        if exc.errno != errno.EINVAL or abi <= _TESTED_ABI:
            return Protection(kind="none", note=f"Landlock refused the sandbox ({exc.strerror}): {_UNPROTECTED}")
        # A newer kernel that disagrees with what this module knows of its ABI: fall back to the
        # newest ABI tested here, which every later kernel accepts.
        try:
            protection = _restrict(_TESTED_ABI, folders, ports, allow_all_tcp)
        except OSError as again:
            return Protection(kind="none", note=f"Landlock refused the sandbox ({again.strerror}): {_UNPROTECTED}")
    notes = [protection.note] if protection.note else []
    notes.extend(_drop_capabilities())
    return dataclasses.replace(protection, note="; ".join(notes))


def _restrict(abi: int, folders: list[Path], ports: list[int], allow_all_tcp: bool) -> Protection:
    """Build the ruleset that ABI `abi` allows and put it in force; OSError if the kernel refuses."""
    fs = handled_fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 and not allow_all_tcp else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # the struct as that ABI knows it
    ruleset = _syscall(_LANDLOCK_SYSCALLS[0], ctypes.byref(_RulesetAttr(fs, net, scoped)), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    threads = _thread_count()
    tsync = _RESTRICT_SELF_TSYNC if abi >= 8 and threads > 1 else 0
    try:
        for path, rights in _grants(folders, fs):
            _allow_beneath(ruleset, path, rights)
        if net:
            _allow_ports(ruleset, net, ports)
        _syscall(_LANDLOCK_SYSCALLS[2], ctypes.c_int(ruleset), ctypes.c_uint32(tsync))
    finally:
        os.close(ruleset)
    early = plural(threads - 1, "thread")
    keep = "keeps its" if threads == 2 else "keep their"
    note = f"{early} started before the sandbox {keep} rights" if threads > 1 and not tsync else ""
    return Protection(kind="landlock", abi=abi, filesystem=True, network=bool(net), signals=bool(scoped),
                      tcp_ports=_ranges(ports) if net else (), note=note)


def _port(value) -> int:
    port = int(value)
    if not 0 <= port <= 65535:
        raise ValueError(f"not a TCP port: {value!r}")
    return port


def _ranges(ports: list[int]) -> tuple[tuple[int, int], ...]:
    ranges: list[list[int]] = []
    for port in ports:
        if ranges and port == ranges[-1][1] + 1:
            ranges[-1][1] = port
        else:
            ranges.append([port, port])
    return tuple((lo, hi) for lo, hi in ranges)


def _grants(folders: list[Path], fs: int) -> list[tuple[Path, int]]:
    """(path, rights) of every rule: every write right in folders, file rights on devices."""
    grants = [(folder, fs) for folder in folders]
    grants += [(Path(p), fs) for p in _SHARED_DIRS if os.path.isdir(p)]
    grants += [(Path(_NULL_DEVICE), fs & _FILE_RIGHTS)] if os.path.exists(_NULL_DEVICE) else []
    for pattern in _GPU_DEVICES:
        grants += [(p, fs & _DEVICE_RIGHTS) for p in sorted(Path("/dev").glob(pattern))]
    grants += [(Path(p), fs & _DEVICE_RIGHTS) for p in _GPU_DEVICE_DIRS if os.path.isdir(p)]
    return grants


def _allow_beneath(ruleset: int, path: Path, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        if rights:
            rule = _PathBeneathAttr(rights, fd)
            _syscall(_LANDLOCK_SYSCALLS[1], ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                     ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def _allow_ports(ruleset: int, rights: int, ports: list[int]) -> None:
    # One struct reused: DDP's whole ephemeral range is ~28,000 rules, ~50 ms this way.
    rule = _NetPortAttr(rights, 0)
    args = (ctypes.c_long(_LANDLOCK_SYSCALLS[1]), ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),
            ctypes.byref(rule), ctypes.c_uint32(0))
    syscall = _libc().syscall
    for port in ports:
        rule.port = port
        _checked(syscall(*args))


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _drop_capabilities() -> list[str]:
    """Run as root (or with file capabilities), give up every capability, for good: Landlock
    bounds files, TCP and signals, not raw sockets or loading a kernel module."""
    if not _effective_capabilities():
        return []
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    problem = None
    for cap in range(last + 1):  # the bounding set: an exec, even of a root program, gets none back
        try:
            _prctl(_PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # EINVAL: a capability this kernel does not have
                problem = exc.strerror
                break
    try:
        data = (_CapData * 2)()
        _checked(_libc().capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), data))
    except (OSError, AttributeError) as exc:
        problem = problem or getattr(exc, "strerror", None) or str(exc)
    if problem:
        return [f"this process's capabilities could not all be dropped ({problem})"]
    return ["every capability of this process dropped"]


def _effective_capabilities() -> int:
    try:
        with open("/proc/self/status", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def die_with_parent(parent_pid: int | None = None) -> bool:
    """Have the kernel SIGKILL this process when its parent ends; if the parent already has, end now.

    `parent_pid`: the parent when this process started (default: its parent now). The signal comes
    when the parent *thread* that started this process ends. False where the OS has no such call.
    """
    if not sys.platform.startswith("linux"):
        return False
    expected = os.getppid() if parent_pid is None else parent_pid
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        return False
    if os.getppid() != expected:  # it ended before the request: no one is left to send the signal
        os.kill(os.getpid(), signal.SIGKILL)
    return True
