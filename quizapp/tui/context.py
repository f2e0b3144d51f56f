"""What every screen works with: the bank, the progress store, the exercises, the clock.

The App builds one `StudyContext` and hands it to the screens it opens; screens read and write
progress through it, so tests can inject a small bank, a temp store and a fixed `now`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from quizapp.bank.outline import BankOutline
from quizapp.catalog import Exercise
from quizapp.study.stats import Stats, compute_stats, store_version
from quizapp.study.store import GradeRecord, Store, utcnow

if TYPE_CHECKING:
    from quizapp.bank.model import Bank, Question
    from quizapp.tui.graders import CommandGrader, WarmAppGrader

SESSION_SIZE = 20  # questions in one review session


class StudyContext:
    """`bank` is the whole bank, or a function that loads it: then it is loaded on first use, and
    until then `outline` (required in that case) stands in for it, which is all the home screen needs.
    A plain class, not a dataclass: it is defined on the way to the first screen, where compiling a
    dataclass's generated methods costs a millisecond or two."""

    def __init__(self, *, bank: Bank | Callable[[], Bank], store: Store, catalog: dict[str, Exercise],
                 work_dir: Path, grader: WarmAppGrader | CommandGrader, clock: Callable[[], datetime] = utcnow,
                 catalog_error: str | None = None, outline: BankOutline | None = None) -> None:
        self._bank, self._load_bank = (None, bank) if callable(bank) else (bank, None)
        self.outline = outline if outline is not None else self.bank.outline()
        self.store = store
        self.catalog = catalog
        self.work_dir = work_dir
        self.grader = grader  # the one way screens grade a file (see tui/grading.py)
        self.clock = clock
        self.catalog_error = catalog_error
        self.chosen_paths: dict[str, Path] = {}  # solution files picked this session

    @property
    def bank(self) -> Bank:
        if self._bank is None:
            self._bank = self._load_bank()
            # A pack edited since the start loads as it is now; the figures follow what is loaded.
            self.outline = self._bank.outline()
        return self._bank

    def now(self) -> datetime:
        return self.clock()

    def store_version(self) -> tuple[int, int]:
        """Changes to the store (study.stats.store_version): equal values, nothing changed in between."""
        return store_version(self.store)

    def stats(self) -> Stats:
        return compute_stats(self.outline, self.store, now=self.now(), exercise_ids=tuple(self.catalog))

    def queue(self, topic: str | None = None) -> list[Question]:
        """Due cards, then new questions; one session's worth."""
        from quizapp.study.queue import study_queue  # the scheduler loads when study starts, not at start-up

        return study_queue(self.bank, self.store, topic=topic, now=self.now(), limit=SESSION_SIZE,
                           new_limit=self.new_today().left)

    def new_today(self):
        """The daily limit of new questions and how much of it today used (study.limits.NewToday)."""
        from quizapp.study.limits import new_today

        return new_today(self.store, self.now())

    def preview(self, question: Question) -> dict[int, timedelta]:
        from quizapp.study import schedule

        return schedule.preview(self.store.card_json(question.id), now=self.now(),
                                parameters=self.store.fsrs_parameters())

    def record(self, question: Question, *, rating: int, correct: bool | None, response,
               duration_ms: int | None) -> datetime:
        from quizapp.study import schedule

        return schedule.record_review(self.store, question, rating=rating, correct=correct,
                                      response=response, duration_ms=duration_ms, now=self.now())

    def grades(self, exercise_id: str) -> list[GradeRecord]:
        return self.store.grades(exercise_id)

    def solution_path(self, exercise_id: str) -> Path:
        """The learner's own file: the one picked this session, else the one they created or chose in the
        app started from this folder (while it exists), else the newest of ./<id>.py, ./<id>_2.py, ...
        (a fresh starter for a review goes to the next number), else ./<id>.py. A grade of another file
        (`quizapp grade /tmp/scratch.py`) never changes it. The exercise screen pins what it showed (see
        `pin_solution_path`)."""
        if exercise_id in self.chosen_paths:
            return self.chosen_paths[exercise_id]
        own = self.store.own_file(exercise_id, self.work_dir)
        if own is not None and own.is_file():
            return own
        return self.usual_path(exercise_id)

    def usual_path(self, exercise_id: str) -> Path:
        """The newest of ./<id>.py, ./<id>_2.py, ... in the folder the app was started in, else ./<id>.py."""
        here = self.work_dir / f"{exercise_id}.py"
        numbered = [(int(n), path) for path in self.work_dir.glob(f"{exercise_id}_*.py")
                    if (n := path.name[len(exercise_id) + 1:-3]).isdigit() and path.is_file()]
        return max(numbered)[1] if numbered else here

    def choose_solution_path(self, exercise_id: str, path: Path) -> None:
        """The learner created or chose `path` in the app: it is their file, now and in the next sessions
        started from this folder. One the folder's usual names find anyway is not remembered, so that a
        fresh starter `quizapp review` writes next to it is found as well."""
        self.chosen_paths[exercise_id] = path
        self.store.set_own_file(exercise_id, self.work_dir, None if path == self.usual_path(exercise_id) else path)

    def pin_solution_path(self, exercise_id: str) -> Path:
        """Keep the file an exercise screen opened with for the rest of the session."""
        return self.chosen_paths.setdefault(exercise_id, self.solution_path(exercise_id))

    def show_path(self, path: Path) -> str:
        """A path as the learner would type it from the folder quizapp was started in."""
        try:
            rel = os.path.relpath(path, self.work_dir)
        except ValueError:
            return str(path)
        return str(path) if rel.startswith("..") else os.path.join(".", rel)

    def resolve(self, typed: str) -> Path:
        path = Path(typed).expanduser()
        return path if path.is_absolute() else self.work_dir / path
