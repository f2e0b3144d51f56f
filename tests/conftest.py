"""Shared fixtures. The real data dir is never touched: QUIZAPP_HOME points at a temp folder for the
whole session (module and session fixtures run before any per-test fixture), and each test gets one
of its own on top."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest


def pytest_configure(config):
    from platformdirs import user_data_dir

    # Kept for test_isolation, which proves the run never reaches it.
    config.quizapp_real_data_dir = Path(user_data_dir("quizapp", appauthor=False))
    base = Path(tempfile.mkdtemp(prefix="quizapp-tests-"))
    config.quizapp_session_dir = base
    os.environ["QUIZAPP_HOME"] = str(base / "session-home")
    # Even a test that unsets QUIZAPP_HOME falls back to a temp folder, not the learner's.
    os.environ["XDG_DATA_HOME"] = str(base / "xdg-data")


def pytest_unconfigure(config):
    base = getattr(config, "quizapp_session_dir", None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def grades_may_write_the_test_folders(tmp_path_factory):
    """The grader's sandbox lets a solution write only in its grade's folder; the suite's own test
    solutions leave pid files and probes in their test's tmp_path, so the suite's temp root is
    writable to grades. Tests of the sandbox itself unset this (monkeypatch.delenv)."""
    os.environ["QUIZAPP_GRADE_WRITABLE"] = str(tmp_path_factory.getbasetemp())
    yield
    os.environ.pop("QUIZAPP_GRADE_WRITABLE", None)


@pytest.fixture(autouse=True)
def quizapp_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "quizapp-home"
    monkeypatch.setenv("QUIZAPP_HOME", str(home))
    return home


@pytest.fixture
def write_pack(tmp_path):
    """Write a question pack from a dedented YAML string; returns its path."""

    def write(text: str, name: str = "pack.yaml", folder: Path | None = None) -> Path:
        folder = folder or tmp_path / "packs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write
