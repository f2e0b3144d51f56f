"""Fixtures for the TUI tests: a small question pack, one fake exercise, a fake grader, a fixed clock."""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from pathlib import Path

import pytest
from tuihelp import DATA, FAKE_GRADER, NOW, pack_bank

from quizapp.catalog import load_catalog
from quizapp.tui.app import QuizApp


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests in a fresh event loop (Pilot needs one); no asyncio plugin required."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    wanted = inspect.signature(pyfuncitem.obj).parameters
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in wanted}))
    return True


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Stats count days in local time: pin it, so figures and snapshots do not depend on the machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def work_dir(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def make_app(work_dir):
    """An app on the test pack and exercise; `grader` picks the fake grader's mode."""

    def make(grader: str = "pass", **kwargs) -> QuizApp:
        kwargs.setdefault("bank", pack_bank())
        kwargs.setdefault("catalog", load_catalog(DATA / "exercises"))
        kwargs.setdefault("now", NOW)
        kwargs.setdefault("work_dir", work_dir)
        kwargs.setdefault("grader_cmd", [sys.executable, str(FAKE_GRADER), grader])
        return QuizApp(**kwargs)

    return make
