"""Where quizapp's data lives. Functions only: nothing is created at import."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "quizapp"
HOME_ENV = "QUIZAPP_HOME"


def data_dir() -> Path:
    """The user's data dir: $QUIZAPP_HOME if set, else the platform's user data dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Rebuildable data (the parsed bank): under $QUIZAPP_HOME if set, else the platform's cache dir."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser() / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME, appauthor=False))


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
