"""FSRS scheduling over the store: what a rating does to a card, and what each rating would do."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from functools import lru_cache

from fsrs import Card, Rating, Scheduler

from quizapp.bank.model import Question
from quizapp.study import fsrs_params
from quizapp.study.store import Store, utcnow

RATING_NAMES = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
# A question counts towards mastery when FSRS expects it recalled this far ahead, this surely: a learner
# reads mastery as "what I would get right at an interview next week", and the recall FSRS predicts
# for right now is near 1 just after any review, a failed one included.
MASTERY_HORIZON = timedelta(days=7)
MASTERY_RECALL = 0.9


@lru_cache(maxsize=8)
def scheduler(parameters: tuple[float, ...] | None = None) -> Scheduler:
    """The scheduler for these parameters (None: FSRS's defaults).

    Fuzzing spreads due dates randomly; without it the interval a rating button shows is exactly
    the interval that rating then gives, and replaying a review log gives the same cards everywhere.
    """
    if parameters is not None:
        try:
            return Scheduler(parameters=parameters, enable_fuzzing=False)
        except ValueError:
            pass  # fitted by an fsrs with another parameter count: the defaults still schedule well
    return Scheduler(enable_fuzzing=False)


def _active_scheduler() -> Scheduler:
    return scheduler(fsrs_params.active())


def default_rating(correct: bool | None) -> int:
    """The rating a checked answer suggests: Good when right, Again when wrong (cards: Good)."""
    return 1 if correct is False else 3


def card_from_json(card_json: str | None) -> Card:
    return Card.from_dict(json.loads(card_json)) if card_json else Card()


def preview(card_json: str | None, now: datetime | None = None) -> dict[int, timedelta]:
    """rating -> the interval until the next review that rating would give."""
    now = now or utcnow()
    card = card_from_json(card_json)
    out = {}
    for rating in RATING_NAMES:
        new_card, _ = _active_scheduler().review_card(card, Rating(rating), review_datetime=now)
        out[rating] = new_card.due - now
    return out


def retrievability(card_json: str, now: datetime | None = None) -> float:
    """The probability, by FSRS, that the learner recalls the card now."""
    return _active_scheduler().get_card_retrievability(card_from_json(card_json), now or utcnow())


def record_review(store: Store, question: Question, *, rating: int, correct: bool | None,
                  response=None, duration_ms: int | None = None, now: datetime | None = None) -> datetime:
    """Save one answer and reschedule its card in one transaction; returns the next due time."""
    if rating not in RATING_NAMES:
        raise ValueError(f"rating must be 1-4, got {rating!r}")
    now = now or utcnow()
    result = {}
    active = scheduler(store.fsrs_parameters())

    def reschedule(old_json):
        new_card, _ = active.review_card(card_from_json(old_json), Rating(rating), review_datetime=now)
        result["due"] = new_card.due
        return json.dumps(new_card.to_dict()), new_card.due

    store.record_answer(question.id, question.topic, rating=rating, correct=correct, reschedule=reschedule,
                        at=now, duration_ms=duration_ms, response=response)
    return result["due"]


def stable_card_id(question_id: str) -> int:
    """A card id derived from the question id, so a replayed card is the same on every machine."""
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:6], "big")


def replay_card(question_id: str, reviews: list[tuple[datetime, int]],
                parameters: tuple[float, ...] | None = None) -> tuple[str, datetime]:
    """The card a question's whole review log gives, reviews taken in time order: (card JSON, due)."""
    if not reviews:
        raise ValueError(f"{question_id}: no reviews to replay")
    active = scheduler(parameters)
    ordered = sorted(reviews, key=lambda review: review[0])
    card = Card(card_id=stable_card_id(question_id), due=ordered[0][0])
    for at, rating in ordered:
        card, _ = active.review_card(card, Rating(rating), review_datetime=at)
    return json.dumps(card.to_dict()), card.due


def format_interval(delta: timedelta) -> str:
    """A short human interval: 1m, 10m, 3h, 4d, 2mo, 1.5y."""
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))}m"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h"
    days = seconds / 86400
    if days < 31:
        return f"{round(days)}d"
    if days < 365:
        return f"{round(days / 30.4)}mo"
    return f"{days / 365:.1f}y"


def held(card_json: str, now: datetime) -> bool:
    """Whether FSRS expects the card recalled a week from `now` with at least 90% odds: what counts
    towards mastery. FSRS defines stability as the time after the last review at which recall falls
    to 90%, so that is the day the card's hold runs out (read in continuous time: fsrs's own
    retrievability rounds the elapsed time down to whole days)."""
    card = card_from_json(card_json)
    if card.last_review is None or not card.stability:
        return False
    return now + MASTERY_HORIZON <= card.last_review + timedelta(days=card.stability)
