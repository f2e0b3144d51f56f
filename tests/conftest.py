"""Shared fixtures. Every test gets its own QUIZAPP_HOME: the real data dir is never touched."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


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
