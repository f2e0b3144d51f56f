"""The exercises that ship with quizapp: their metadata, read from exercises/<id>/exercise.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from quizapp import paths

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when PyYAML has it


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    topic: str
    difficulty: int
    statement: str
    hints: tuple[str, ...]
    folder: Path

    @property
    def starter(self) -> Path:
        return self.folder / "starter.py"

    @property
    def reference(self) -> Path:
        return self.folder / "reference.py"


def load_catalog(root: Path | None = None) -> dict[str, Exercise]:
    """id -> Exercise for every folder that holds an exercise.yaml, in id order."""
    root = root or paths.shipped_exercises_dir()
    out: dict[str, Exercise] = {}
    if not root.is_dir():
        return out
    for meta in sorted(root.glob("*/exercise.yaml")):
        data = yaml.load(meta.read_text(encoding="utf-8"), Loader=_Loader)
        out[data["id"]] = Exercise(
            id=data["id"], title=data["title"], topic=data["topic"], difficulty=int(data["difficulty"]),
            statement=data["statement"], hints=tuple(data.get("hints", ())), folder=meta.parent,
        )
    return out
