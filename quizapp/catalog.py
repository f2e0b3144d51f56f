"""The exercises that ship with quizapp: their metadata, read from exercises/<id>/exercise.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from quizapp import paths
from quizapp.filecache import cached

DRILL_PREFIX = "debug_"  # a debugging drill's id starts with it (CONTRACTS, section 4)


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
    # drills only: the public report the bug comes from ("owner/repo#N: title"), and the symptom in a line
    source: str = ""
    symptom: str = ""

    @property
    def is_drill(self) -> bool:
        """A debugging drill: a whole broken script to fix, listed apart from the exercises."""
        return is_drill_id(self.id)

    @property
    def list_title(self) -> str:
        """The title as a list under a "drills" heading shows it: without the "Drill: " label."""
        if not self.is_drill or not self.title.startswith("Drill: "):
            return self.title
        rest = self.title.removeprefix("Drill: ")
        return rest[:1].upper() + rest[1:]

    @property
    def kind(self) -> str:
        return "drill" if self.is_drill else "exercise"

    @property
    def starter(self) -> Path:
        return self.folder / "starter.py"

    @property
    def reference(self) -> Path:
        return self.folder / "reference.py"


def is_drill_id(exercise_id: str) -> bool:
    return exercise_id.startswith(DRILL_PREFIX)


def exercises_only(catalog: dict[str, Exercise]) -> dict[str, Exercise]:
    return {k: ex for k, ex in catalog.items() if not ex.is_drill}


def drills_only(catalog: dict[str, Exercise]) -> dict[str, Exercise]:
    return {k: ex for k, ex in catalog.items() if ex.is_drill}


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
            source=str(data.get("source") or ""), symptom=str(data.get("symptom") or ""),
        )
    return out


def load_catalog_cached() -> dict[str, Exercise]:
    """`load_catalog()` of the shipped exercises, from the start-up cache while no exercise.yaml changed."""
    root = paths.shipped_exercises_dir()
    files = sorted(root.glob("*/exercise.yaml")) if root.is_dir() else []
    return cached("catalog", files + [Path(__file__)], load_catalog, dict)  # this file shapes an Exercise
