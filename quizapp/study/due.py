"""What is due, now and next: questions (their cards, and the ones a failed check asked for) and
exercises (replayed from their history). One read of the store; `quizapp due`, the queue, the home
screen and stats all take it from here.

"Due now" has one definition, `scheduled_questions`: a question is due at its card's due date, or
at the moment a failed check asked for it when that comes first. Every count of questions due
(`quizapp due`, `quizapp stats`, home, the stats screen, a session's summary) is read from it, and
names how many of them the checks asked for (`asked_words`: "42 due now (21 asked for by failed
checks)").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from quizapp.study.exercise_schedule import ExerciseState, schedules
from quizapp.study.store import GradeEvent, Store


@dataclass(frozen=True)
class DueQuestion:
    id: str
    topic: str
    due: datetime
    asked_by: str | None = None  # "exercise_id" when a failed check of that exercise made it due


@dataclass(frozen=True)
class DueExercise:
    id: str
    due: datetime


@dataclass(frozen=True)
class DuePlan:
    now: datetime
    questions: list[DueQuestion]  # every scheduled question, by due
    exercises: list[DueExercise]  # every scheduled exercise, by due
    states: dict[str, ExerciseState]  # every exercise of the catalog
    retired: list[str]  # exercises with history that the catalog no longer has: kept, not scheduled

    def questions_due(self) -> list[DueQuestion]:
        return [q for q in self.questions if q.due <= self.now]

    def due_now(self) -> DueCount:
        return count_due(self.questions, self.now)

    def exercises_due(self) -> list[DueExercise]:
        return [e for e in self.exercises if e.due <= self.now]

    def to_json(self) -> dict:
        return {"schema": 1, "now": self.now.isoformat(),
                "questions": [{"id": q.id, "topic": q.topic, "due": q.due.isoformat()} for q in self.questions],
                "exercises": [{"id": e.id, "due": e.due.isoformat()} for e in self.exercises]}


class DueCount(NamedTuple):
    questions: int  # questions due now, the ones a failed check asked for included
    asked: int  # of those, the ones a failed check asked for


def count_due(questions, now: datetime) -> DueCount:
    """How many of `questions` (DueQuestions) are due at `now`, and how many of those a check asked for."""
    due = [q for q in questions if q.due <= now]
    return DueCount(len(due), sum(1 for q in due if q.asked_by))


def asked_words(asked: int) -> str:
    """" (21 asked for by failed checks)", said after a count of questions due; empty when none was."""
    return f" ({asked} asked for by {'a failed check' if asked == 1 else 'failed checks'})" if asked else ""


def review_soon(grades: list[GradeEvent], last_answered: Mapping[str, str]) -> dict[str, tuple[datetime, str]]:
    """question id -> (since when, which exercise): the questions a failed check pointed at and that
    have not been answered since. The earliest request counts."""
    out: dict[str, tuple[datetime, str]] = {}
    for grade in grades:
        for qid in grade.review:
            answered = last_answered.get(qid)
            if answered is not None and answered >= grade.graded_at:
                continue
            at = datetime.fromisoformat(grade.graded_at)
            if qid not in out or at < out[qid][0]:
                out[qid] = (at, grade.exercise_id)
    return out


def file_digest(path: Path) -> str | None:
    """sha256 of a file (a graded solution, a starter), or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def catalog_schedules(catalog: Mapping, grades, events, ids=None) -> dict[str, ExerciseState]:
    """The schedule of each exercise in `ids` (default: the catalog's), its starter told apart by digest."""
    ids = list(catalog) if ids is None else list(ids)
    return schedules(ids, grades, events,
                     starter_hashes={ex: file_digest(catalog[ex].starter) if ex in catalog else None for ex in ids})


def exercise_state(store: Store, exercise) -> ExerciseState:
    """One exercise's schedule (`exercise`: a catalog Exercise)."""
    from quizapp.study.exercise_schedule import replay

    return replay(exercise.id, store.grade_events(exercise.id), store.exercise_events(exercise.id),
                  starter_hash=file_digest(exercise.starter))


def next_free_path(folder: Path, exercise_id: str) -> Path:
    """Where a fresh starter goes when the exercise comes back: <id>_2.py, <id>_3.py, ... (the first
    that does not exist), so that the earlier solutions are kept."""
    n = 2
    while (folder / f"{exercise_id}_{n}.py").exists():
        n += 1
    return folder / f"{exercise_id}_{n}.py"


def readable_store_cards(store: Store) -> dict[str, tuple[str, str]]:
    """`store.cards()`, a damaged card read as its answers rebuild it (schedule.readable_cards)."""
    from quizapp.study.cards import card_problem

    cards = store.cards()
    if any(card_problem(card) for _, card in cards.values()):
        from quizapp.study.schedule import readable_cards

        cards = readable_cards(cards, store.answers(), store.fsrs_parameters())
    return cards


def scheduled_questions(store: Store, question_topics: Mapping[str, str], *,
                        cards: Mapping[str, tuple[str, str]] | None = None,
                        grades: list[GradeEvent] | None = None) -> list[DueQuestion]:
    """Every question of `question_topics` (id -> topic) on the schedule, by due: at its card's due
    date, or when a failed check asked for it if that is earlier. Suspended questions are left out.

    The one definition of what is due: the figures "due now" everywhere count these with due <= now.
    `cards` (readable, see readable_store_cards) and `grades` save a read when the caller has them."""
    cards = readable_store_cards(store) if cards is None else cards
    grades = store.grade_events() if grades is None else grades
    soon = review_soon(grades, store.last_answered()) if grades else {}
    suspended = store.suspended_ids()  # in no due count until unsuspended
    questions: dict[str, DueQuestion] = {}
    for qid, (due_iso, _) in cards.items():
        if qid in question_topics and qid not in suspended:
            questions[qid] = DueQuestion(qid, question_topics[qid], datetime.fromisoformat(due_iso))
    for qid, (since, exercise_id) in soon.items():
        if qid not in question_topics or qid in suspended:
            continue  # a check names a question the learner's packs no longer have, or one suspended
        card = questions.get(qid)
        if card is None or since < card.due:
            questions[qid] = DueQuestion(qid, question_topics[qid], since, exercise_id)
    return sorted(questions.values(), key=lambda q: (q.due, q.id))


def due_plan(store: Store, question_topics: Mapping[str, str], catalog: Mapping, now: datetime) -> DuePlan:
    """`question_topics`: question id -> topic, for the questions of the bank as loaded (a question a
    pack no longer has is left out); `catalog`: exercise id -> Exercise."""
    grades = store.grade_events()
    questions = scheduled_questions(store, question_topics, grades=grades)
    states = catalog_schedules(catalog, grades, store.exercise_events())
    exercises = [DueExercise(ex, state.due) for ex, state in states.items() if state.due is not None]
    retired = sorted({g.exercise_id for g in grades} - set(catalog))
    return DuePlan(now, questions, sorted(exercises, key=lambda e: (e.due, e.id)), states, retired)
