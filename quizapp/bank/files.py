"""Which files make up the bank, and reading one safely. No YAML here: the start-up path lists files
before it parses any."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from quizapp import paths

PACK_SUFFIXES = (".yaml", ".yml")
MAX_PACK_BYTES = 5 * 1024 * 1024  # the largest shipped pack is under 60 KB


class UnreadableFile(Exception):
    """A named file that is not read: the message says why, in the learner's words."""


def pack_files(locations) -> list[Path]:
    """Expand folders into their *.yaml files (sorted); files are kept as named."""
    files: list[Path] = []
    for location in locations:
        location = Path(location)
        if location.is_dir():
            files.extend(sorted(p for p in location.iterdir() if p.suffix in PACK_SUFFIXES and p.is_file()))
        else:
            files.append(location)
    return files


def default_pack_files() -> list[Path]:
    """The shipped bank, then the learner's packs in the data dir (if that folder exists)."""
    locations = [paths.shipped_questions_dir()]
    user_dir = paths.user_questions_dir()
    if user_dir.is_dir():
        locations.append(user_dir)
    return pack_files(locations)


def _store_files() -> set[tuple[int, int]]:
    """(device, inode) of the progress database and its WAL files, those that exist (stat only)."""
    db = paths.db_path()
    found = set()
    for candidate in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def read_regular_file(path: Path, *, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most `limit` bytes; UnreadableFile says why not.

    Looks before it opens: a FIFO would block the read for ever, /dev/zero never ends, a symlink loop
    raises. Never the progress database either: closing any descriptor of it would drop this process's
    SQLite locks (see quizapp.study.store).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UnreadableFile("no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFile("a symbolic link that loops (it leads back to itself)") from None
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    _check_kind(st, what, limit)
    if (st.st_dev, st.st_ino) in _store_files():
        raise UnreadableFile(f"this is quizapp's progress database, not a {what}")
    try:
        # O_NONBLOCK: should a FIFO have taken the file's place since the stat, opening it does not wait.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        _check_kind(os.fstat(fd), what, limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:  # it grew after the stat
        raise UnreadableFile(_too_big(size, what, limit, at_least=True))
    return b"".join(chunks)


def _check_kind(st: os.stat_result, what: str, limit: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise UnreadableFile(f"is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "something other than a file")
        raise UnreadableFile(f"is {kind}, not a {what}; only regular files are read")
    if st.st_size > limit:
        raise UnreadableFile(_too_big(st.st_size, what, limit))


def _too_big(size: int, what: str, limit: int, *, at_least: bool = False) -> str:
    return (f"is {'at least ' if at_least else ''}{size / 2**20:.1f} MB; a {what} may be at most "
            f"{limit / 2**20:g} MB")
