"""The exercises that ship with quizapp: their metadata, read from exercises/<id>/exercise.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from quizapp import paths
from quizapp.filecache import cached


class Exercise(NamedTuple):
    """One exercise's metadata. A NamedTuple, not a frozen dataclass: this module is imported on the
    way to the first screen, where a dataclass's generated methods cost about 2 ms to compile."""

    id: str
    title: str
    topic: str
    difficulty: int
    statement: str
    hints: tuple[str, ...]
    folder: Path
    # check id -> the bank's question ids the check rests on (a failed check sends the learner to them)
    questions: dict[str, tuple[str, ...]] = {}

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
    import yaml  # here, not at the top: the app's start reads the catalog from its cache

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when PyYAML has it
    for meta in sorted(root.glob("*/exercise.yaml")):
        data = yaml.load(meta.read_text(encoding="utf-8"), Loader=loader)
        out[data["id"]] = Exercise(
            id=data["id"], title=data["title"], topic=data["topic"], difficulty=int(data["difficulty"]),
            statement=data["statement"], hints=tuple(data.get("hints", ())), folder=meta.parent,
            questions={str(check): tuple(str(q) for q in ids or ()) for check, ids in (data.get("questions") or {}).items()},
        )
    return out


def load_catalog_cached() -> dict[str, Exercise]:
    """`load_catalog()` of the shipped exercises, from the start-up cache while no exercise.yaml changed."""
    root = paths.shipped_exercises_dir()
    files = sorted(root.glob("*/exercise.yaml")) if root.is_dir() else []
    return cached("catalog", files + [Path(__file__)], load_catalog, dict)  # this file shapes an Exercise
