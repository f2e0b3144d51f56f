"""FSRS scheduling over the store: what a rating does to a card, and what each rating would do."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from fsrs import Card, Rating, Scheduler

from quizapp.bank.model import Question
from quizapp.study.cards import card_problem
from quizapp.study.store import Store, iso, utcnow

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


@lru_cache(maxsize=1)
def exercise_scheduler() -> Scheduler:
    """The scheduler of exercises: FSRS's default parameters (the learner's fitted ones describe how
    they recall cards, not how they rewrite a training loop), and no learning steps: an exercise
    comes back after days, never in ten minutes."""
    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def default_rating(correct: bool | None) -> int:
    """The rating a checked answer suggests: Good when right, Again when wrong (cards: Good)."""
    return 1 if correct is False else 3


def parse_card(card_json: str) -> Card | None:
    """The card stored as card_json, or None when it is damaged (see cards.card_problem)."""
    if card_problem(card_json) is not None:
        return None
    try:
        return Card.from_dict(json.loads(card_json))
    except (ValueError, TypeError, KeyError, OverflowError):
        return None


def card_from_json(card_json: str | None) -> Card:
    """The stored card; a new one when there is none, or when it is damaged (read as unseen, never a crash)."""
    card = parse_card(card_json) if card_json else None
    return card if card is not None else Card()


def preview(card_json: str | None, now: datetime | None = None,
            parameters: tuple[float, ...] | None = None) -> dict[int, timedelta]:
    """rating -> the interval until the next review that rating would give, under `parameters` (the
    store's fitted ones, `store.fsrs_parameters()`; None: FSRS's defaults)."""
    now = now or utcnow()
    card = card_from_json(card_json)
    active = scheduler(parameters)
    out = {}
    for rating in RATING_NAMES:
        new_card, _ = active.review_card(card, Rating(rating), review_datetime=now)
        out[rating] = new_card.due - now
    return out


def retrievability(card_json: str, now: datetime | None = None,
                   parameters: tuple[float, ...] | None = None) -> float:
    """The probability, by FSRS under `parameters`, that the learner recalls the card now."""
    return scheduler(parameters).get_card_retrievability(card_from_json(card_json), now or utcnow())


def record_review(store: Store, question: Question, *, rating: int, correct: bool | None,
                  response=None, duration_ms: int | None = None, now: datetime | None = None,
                  uid: str | None = None) -> datetime:
    """Save one answer and reschedule its card in one transaction; returns the next due time.
    `uid`: the answer's id (made here when not given), by which `Store.undo_answer` takes it back."""
    if rating not in RATING_NAMES:
        raise ValueError(f"rating must be 1-4, got {rating!r}")
    now = now or utcnow()
    result = {}
    active = scheduler(store.fsrs_parameters())

    def reschedule(old_json):
        card = parse_card(old_json) if old_json else Card()
        if card is None:  # damaged: rebuilt from the question's answers so far (this transaction sees them all)
            card = _replayed(question.id, _reviews_of(store.answers(), {question.id}).get(question.id, []), active)
        new_card, _ = active.review_card(card, Rating(rating), review_datetime=now)
        result["due"] = new_card.due
        return json.dumps(new_card.to_dict()), new_card.due

    store.record_answer(question.id, question.topic, rating=rating, correct=correct, reschedule=reschedule,
                        at=now, duration_ms=duration_ms, response=response, uid=uid)
    return result["due"]


def stable_card_id(question_id: str) -> int:
    """A card id derived from the question id, so a replayed card is the same on every machine."""
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:6], "big")


def replay_card(question_id: str, reviews: list[tuple[datetime, int]],
                parameters: tuple[float, ...] | None = None) -> tuple[str, datetime]:
    """The card a question's whole review log gives, reviews taken in time order: (card JSON, due)."""
    if not reviews:
        raise ValueError(f"{question_id}: no reviews to replay")
    card = _replayed(question_id, reviews, scheduler(parameters))
    return json.dumps(card.to_dict()), card.due


def _replayed(question_id: str, reviews: list[tuple[datetime, int]], active: Scheduler) -> Card:
    """The card `reviews` give, from a new one (a new card when there are none)."""
    ordered = sorted(reviews, key=lambda review: review[0])
    card = Card(card_id=stable_card_id(question_id), due=ordered[0][0] if ordered else utcnow())
    for at, rating in ordered:
        card, _ = active.review_card(card, Rating(rating), review_datetime=at)
    return card


def _reviews_of(answers, question_ids: set[str]) -> dict[str, list[tuple[datetime, int]]]:
    """question id -> its (time, rating) reviews among `answers` (store rows), in time order, uid
    breaking ties as an import does; an answer whose own row is damaged is left out."""
    found: dict[str, list[tuple[datetime, str, int]]] = {}
    for row in answers:
        if row["question_id"] not in question_ids:
            continue
        try:
            at = datetime.fromisoformat(row["answered_at"]).astimezone(timezone.utc)
        except (TypeError, ValueError, OverflowError):
            continue
        if row["rating"] in RATING_NAMES and at.year < 9000:
            found.setdefault(row["question_id"], []).append((at, str(row["uid"]), row["rating"]))
    return {qid: [(at, rating) for at, _, rating in sorted(reviews)] for qid, reviews in found.items()}


def readable_cards(cards: dict[str, tuple[str, str]], answers,
                   parameters: tuple[float, ...] | None) -> dict[str, tuple[str, str]]:
    """`store.cards()` with every damaged card rebuilt from the question's answers (store rows), or
    left out (unseen) when it has none: what readers such as the stats and the export go by."""
    damaged = {qid for qid, (_, card) in cards.items() if card_problem(card) is not None}
    if not damaged:
        return cards
    reviews = _reviews_of(answers, damaged)
    readable = {qid: value for qid, value in cards.items() if qid not in damaged}
    for qid in damaged & reviews.keys():
        card = _replayed(qid, reviews[qid], scheduler(parameters))
        readable[qid] = (iso(card.due), json.dumps(card.to_dict()))
    return readable


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
