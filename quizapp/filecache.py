"""Results computed from files, kept between starts so the app's first screen parses no YAML.

An entry is used only while every file it was built from has the same path, size, inode and
modification time as when it was written, and the same quizapp version wrote it; anything else (a
changed, new or missing file, a damaged cache) builds the result afresh and rewrites the entry.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from quizapp import __version__, paths
from quizapp.atomic import write_atomically

FORMAT = 1
T = TypeVar("T")


def _stamp(files: list[Path]) -> tuple:
    stamp = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            stamp.append((str(path), None))
            continue
        stamp.append((str(path), st.st_size, st.st_ino, st.st_mtime_ns))
    return tuple(stamp)


def _read(cache: Path, key: tuple, kind: type):
    try:
        saved_key, value = pickle.loads(cache.read_bytes())
    except Exception:  # noqa: BLE001 - a missing, damaged or foreign cache is simply rebuilt
        return None
    return value if saved_key == key and isinstance(value, kind) else None


def _write(cache: Path, key: tuple, value) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        # a reader sees the old entry or the new one, never half
        write_atomically(cache, pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass  # a read-only data dir only costs the next start its parse


def cached(name: str, files: list[Path], build: Callable[[], T], kind: type) -> T:
    """`build()`, or the value it returned last time if none of `files` changed since."""
    key = (FORMAT, __version__, _stamp(files))
    cache = paths.cache_dir() / f"{name}.pickle"
    value = _read(cache, key, kind)
    if value is None:
        value = build()
        _write(cache, key, value)
    return value
