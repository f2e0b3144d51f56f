"""A stand-in for the `platformdirs` package, put on PYTHONPATH by benchmarks/gpu/run.sh only where the
real one is missing and cannot be installed (the device machines' image has no registry to install
from). quizapp reads it only when QUIZAPP_HOME is unset, and run.sh always sets it; tests/conftest.py
asks it for the learner's real data folder only to prove the tests never touch it. XDG paths, Linux."""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0+quizapp-gpu-shim"


def _base(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / default)


def _dir(base: Path, appname, version, ensure_exists: bool) -> str:
    path = base / appname if appname else base
    path = path / version if appname and version else path
    if ensure_exists:
        path.mkdir(parents=True, exist_ok=True)
    return str(path)


def user_data_dir(appname=None, appauthor=None, version=None, roaming=False, ensure_exists=False) -> str:
    return _dir(_base("XDG_DATA_HOME", ".local/share"), appname, version, ensure_exists)


def user_cache_dir(appname=None, appauthor=None, version=None, opinion=True, ensure_exists=False) -> str:
    return _dir(_base("XDG_CACHE_HOME", ".cache"), appname, version, ensure_exists)


def user_config_dir(appname=None, appauthor=None, version=None, roaming=False, ensure_exists=False) -> str:
    return _dir(_base("XDG_CONFIG_HOME", ".config"), appname, version, ensure_exists)


def user_state_dir(appname=None, appauthor=None, version=None, roaming=False, ensure_exists=False) -> str:
    return _dir(_base("XDG_STATE_HOME", ".local/state"), appname, version, ensure_exists)


def user_log_dir(appname=None, appauthor=None, version=None, opinion=True, ensure_exists=False) -> str:
    return str(Path(user_state_dir(appname, appauthor, version, ensure_exists=ensure_exists)) / "log")
