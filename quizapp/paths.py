"""Where quizapp's data lives. Functions only: nothing is created at import."""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path

APP_NAME = "quizapp"
HOME_ENV = "QUIZAPP_HOME"


def data_dir() -> Path:
    """The user's data dir: $QUIZAPP_HOME if set, else the platform's user data dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    try:
        from platformdirs import user_data_dir
    except ImportError:
        return fallback_dir("data")
    return Path(user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Rebuildable data (the parsed bank): under $QUIZAPP_HOME if set, else the platform's cache dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser() / "cache"
    try:
        from platformdirs import user_cache_dir
    except ImportError:
        return fallback_dir("cache")
    return Path(user_cache_dir(APP_NAME, appauthor=False))


def fallback_dir(kind: str, *, platform: str | None = None, environ=None) -> Path:
    """The user "data" or "cache" dir that platformdirs would give this app, worked out here for an
    interpreter without platformdirs (a pared-down image, a bare CUDA machine). It must agree with
    platformdirs, or a learner's progress would seem to vanish whenever the package comes or goes;
    tests/test_paths_fallback.py holds the two side by side.

    Windows: %LOCALAPPDATA%\\quizapp (platformdirs' default is the local, not the roaming, AppData), the
    cache in its Cache folder. macOS: ~/Library/Application Support/quizapp and ~/Library/Caches/quizapp.
    Elsewhere: ~/.local/share/quizapp and ~/.cache/quizapp. On macOS and elsewhere $XDG_DATA_HOME and
    $XDG_CACHE_HOME take precedence when they hold an absolute path (a relative one is ignored, as
    platformdirs ignores it). `platform` and `environ` default to this interpreter's; tests pass others."""
    if kind not in ("data", "cache"):
        raise ValueError(f"kind is 'data' or 'cache', not {kind!r}")
    platform = sys.platform if platform is None else platform
    env = os.environ if environ is None else environ
    if platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / APP_NAME
        return base / "Cache" if kind == "cache" else base
    xdg = env.get("XDG_DATA_HOME" if kind == "data" else "XDG_CACHE_HOME", "")
    if posixpath.isabs(xdg):
        return Path(xdg) / APP_NAME
    if platform == "darwin":
        return Path.home() / "Library" / ("Application Support" if kind == "data" else "Caches") / APP_NAME
    return Path.home() / (".local/share" if kind == "data" else ".cache") / APP_NAME


def db_path() -> Path:
    return data_dir() / "progress.sqlite3"


def user_questions_dir() -> Path:
    """Where learners drop their own question packs (*.yaml)."""
    return data_dir() / "questions"


def _package_data(name: str) -> Path:
    # An installed wheel carries the folders in quizapp/_data; a source checkout or an
    # editable install has them at the repository's top level.
    installed = Path(__file__).resolve().parent / "_data" / name
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / name


def shipped_questions_dir() -> Path:
    return _package_data("questions")


def shipped_exercises_dir() -> Path:
    return _package_data("exercises")
