"""Exercises on the FSRS schedule, replayed from their history: the grades, the hints shown and the
reference read (`exercise_events`). Nothing about an exercise's schedule is stored apart from that
history, so an export and an import carry it whole, and a new rule replays old history.

The rules (see the contract, "Exercises that come back"):

- An *attempt* is a grade of anything but the unchanged starter file.
- Before the first pass nothing is scheduled. The first pass is a review rated from everything before
  it: Good; Hard after failed attempts or hints; Again after reading the reference.
- Then the exercise comes due like a card. The first attempt once it is due is its review: a pass is
  rated Good, or Hard with hints shown in this round, or Again with the reference read in this round;
  a failure is Again. A round starts when the exercise came due (after a passed review: reading the
  reference right after passing is encouraged, not counted) or right after an Again.
- A pass of a file that passed before (the same code graded again) is no review: the exercise stays due.
- A grade older than the last review (a clock that went backwards) is ignored: nothing in the past
  is scheduled twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from quizapp.study.store import ExerciseEvent, GradeEvent

AGAIN, HARD, GOOD = 1, 2, 3


@dataclass(frozen=True)
class ExerciseReview:
    at: datetime
    rating: int
    grade_uid: str
    passed: bool


@dataclass(frozen=True)
class ExerciseState:
    exercise_id: str
    card_json: str | None  # the FSRS card (None until the first pass)
    due: datetime | None
    reviews: tuple[ExerciseReview, ...]
    attempts: int

    @property
    def scheduled(self) -> bool:
        return self.due is not None

    def is_due(self, now: datetime) -> bool:
        return self.due is not None and self.due <= now


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def replay(exercise_id: str, grades: Iterable[GradeEvent], events: Iterable[ExerciseEvent], *,
           starter_hash: str | None = None) -> ExerciseState:
    """The exercise's schedule from its history (grades in the order they were recorded)."""
    grades = [g for g in grades if g.exercise_id == exercise_id and not (starter_hash and g.file_hash == starter_hash)]
    if not any(g.status == "pass" for g in grades):
        # Nothing is scheduled before a first pass: no need to load the scheduler at all.
        return ExerciseState(exercise_id, None, None, (), len(grades))
    from fsrs import Card, Rating

    from quizapp.study.schedule import exercise_scheduler, stable_card_id

    active = exercise_scheduler()
    marks = sorted((_moment(e.at), e.kind) for e in events if e.exercise_id == exercise_id)
    card: Card | None = None
    reviews: list[ExerciseReview] = []
    passed_hashes: set[str] = set()
    failed_before = False  # an attempt failed before the first pass
    round_start: datetime | None = None  # None: from the beginning
    attempts = 0

    def marked(kind: str, start: datetime | None, end: datetime) -> bool:
        return any(k == kind and (start is None or at > start) and at <= end for at, k in marks)

    for grade in grades:
        at = _moment(grade.graded_at)
        if reviews and at < reviews[-1].at:
            continue  # the clock went backwards
        attempts += 1
        passed = grade.status == "pass"
        if card is None:
            if not passed:
                failed_before = True
            else:
                if marked("solution", None, at):
                    rating = AGAIN
                elif failed_before or marked("hint", None, at):
                    rating = HARD
                else:
                    rating = GOOD
                card = Card(card_id=stable_card_id(exercise_id))  # fsrs would otherwise wait 1 ms to make an id
                card, _ = active.review_card(card, Rating(rating), review_datetime=at)
                reviews.append(ExerciseReview(at, rating, grade.uid, True))
                round_start = card.due
        elif at >= card.due:
            if passed and grade.file_hash is not None and grade.file_hash in passed_hashes:
                continue  # the same code that passed before: not solved again
            if not passed:
                rating = AGAIN
            elif marked("solution", round_start, at):
                rating = AGAIN
            elif marked("hint", round_start, at):
                rating = HARD
            else:
                rating = GOOD
            card, _ = active.review_card(card, Rating(rating), review_datetime=at)
            reviews.append(ExerciseReview(at, rating, grade.uid, passed))
            # After a pass the next round starts when it comes due; after an Again, at once.
            round_start = card.due if rating != AGAIN else at
        if passed and grade.file_hash is not None:
            passed_hashes.add(grade.file_hash)
    return ExerciseState(exercise_id, json.dumps(card.to_dict()) if card is not None else None,
                         card.due if card is not None else None, tuple(reviews), attempts)


def schedules(exercise_ids: Sequence[str], grades: Sequence[GradeEvent], events: Sequence[ExerciseEvent], *,
              starter_hashes: dict[str, str | None]) -> dict[str, ExerciseState]:
    """Each exercise's state, from one read of the whole history."""
    by_id: dict[str, list[GradeEvent]] = {}
    for grade in grades:
        by_id.setdefault(grade.exercise_id, []).append(grade)
    marks: dict[str, list[ExerciseEvent]] = {}
    for event in events:
        marks.setdefault(event.exercise_id, []).append(event)
    return {ex: replay(ex, by_id.get(ex, ()), marks.get(ex, ()), starter_hash=starter_hashes.get(ex))
            for ex in exercise_ids}
