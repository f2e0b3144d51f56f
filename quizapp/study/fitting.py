"""FSRS tuned to the learner: fit parameters to their review log, keep them only if they predict better.

The fit itself runs in a child process (optimize_child), the only place torch is imported. The
comparison is computed here, without torch: the log loss of each parameter set's predicted recall
against what the learner actually recalled, on the reviews fsrs's optimizer learns from (a card's
reviews at least a day after its previous one, the first 64 of each card).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime

from fsrs import Card, Rating
from fsrs.scheduler import DEFAULT_PARAMETERS

from quizapp.study.schedule import scheduler
from quizapp.study.store import FSRS_PARAMETERS_KEY, Store
from quizapp.words import plural

# fsrs's optimizer learns from mini-batches of 512 reviews and gives back the defaults below one.
MIN_REVIEWS = 512
MAX_REVIEWS_PER_CARD = 64
CHILD_TIMEOUT_S = 900.0
_EPS = 1e-7


class FitError(Exception):
    """The fit could not be run or gave nothing usable; the message says why. Nothing was changed."""


Review = tuple[str, datetime, int]  # question id, when, rating


@dataclass(frozen=True)
class FitResult:
    reviews: int  # every review in the log
    usable: int  # the reviews the fit and the loss are computed on
    default_loss: float
    current_loss: float  # of the parameters in use before the fit (the defaults if none were fitted)
    fitted_loss: float
    fitted: tuple[float, ...]
    kept: bool


def review_log(store: Store) -> list[Review]:
    with store.snapshot() as conn:
        rows = conn.execute("SELECT question_id, answered_at, rating, uid FROM answers").fetchall()
    rows.sort(key=lambda row: (datetime.fromisoformat(row[1]), row[3]))
    return [(qid, datetime.fromisoformat(at), rating) for qid, at, rating, _ in rows]


def _histories(reviews: list[Review]) -> dict[str, list[tuple[datetime, int]]]:
    by_card: dict[str, list[tuple[datetime, int]]] = {}
    for qid, at, rating in reviews:
        history = by_card.setdefault(qid, [])
        if len(history) < MAX_REVIEWS_PER_CARD:
            history.append((at, rating))
    return by_card


def usable_reviews(reviews: list[Review]) -> int:
    """How many reviews came a day or more after the card's previous one (what a fit learns from)."""
    count = 0
    for history in _histories(reviews).values():
        count += sum(1 for (before, _), (at, _) in zip(history, history[1:]) if (at - before).days > 0)
    return count


def log_loss(reviews: list[Review], parameters: tuple[float, ...] | None) -> float:
    """Mean binary cross-entropy of predicted recall vs recalled (any rating but Again), per review."""
    active = scheduler(tuple(parameters) if parameters is not None else None)
    total, count = 0.0, 0
    for qid, history in _histories(reviews).items():
        card = Card(card_id=1, due=history[0][0])
        for at, rating in history:
            if card.last_review is not None and (at - card.last_review).days > 0:
                p = min(1 - _EPS, max(_EPS, active.get_card_retrievability(card, at)))
                recalled = rating != Rating.Again
                total -= math.log(p) if recalled else math.log(1 - p)
                count += 1
            card, _ = active.review_card(card, Rating(rating), review_datetime=at)
    if not count:
        raise FitError("no review came a day or more after the previous one of its question")
    return total / count


def fit_parameters(reviews: list[Review], *, timeout_s: float = CHILD_TIMEOUT_S) -> tuple[float, ...]:
    """Run fsrs's optimizer in a child process on the review log."""
    ids: dict[str, int] = {}
    payload = {"reviews": [[ids.setdefault(qid, len(ids) + 1), at.isoformat(), rating] for qid, at, rating in reviews]}
    try:
        done = subprocess.run([sys.executable, "-m", "quizapp.study.optimize_child"], input=json.dumps(payload),
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise FitError(f"the optimizer took longer than {timeout_s:g} s and was stopped") from None
    except OSError as exc:
        raise FitError(f"cannot start the optimizer: {exc}") from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise FitError(f"the optimizer failed: {reason}")
    try:
        parameters = tuple(float(p) for p in json.loads(done.stdout)["parameters"])
    except (ValueError, KeyError, TypeError):
        raise FitError("the optimizer answered with something that is not a parameter list") from None
    if len(parameters) != len(DEFAULT_PARAMETERS) or not all(math.isfinite(p) for p in parameters):
        raise FitError(f"the optimizer gave {len(parameters)} parameters, expected {len(DEFAULT_PARAMETERS)} finite ones")
    return parameters


def require_enough_history(reviews: list[Review]) -> int:
    """The number of usable reviews; FitError (a polite refusal) below the minimum a fit needs."""
    usable = usable_reviews(reviews)
    if usable < MIN_REVIEWS:
        raise FitError(f"not enough history yet: {plural(usable, 'review')} came a day or more after the previous review "
                       f"of the same question, and a fit needs {MIN_REVIEWS}. Keep reviewing and try again later; "
                       f"until then FSRS's defaults, fitted on millions of reviews, serve you well.")
    return usable


def optimize(store: Store, *, fit=fit_parameters) -> FitResult:
    """Fit, compare, and keep the fitted parameters only if their log loss beats the ones in use.

    Kept parameters also replay every card from its history, so every card reflects them.
    """
    reviews = review_log(store)
    usable = require_enough_history(reviews)
    current = store.fsrs_parameters()
    fitted = fit(reviews)
    default_loss = log_loss(reviews, None)
    current_loss = default_loss if current is None else log_loss(reviews, current)
    fitted_loss = log_loss(reviews, fitted)
    kept = fitted_loss < current_loss
    if kept:
        from quizapp.study.transfer import recompute_cards

        with store.transaction() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET"
                         " value = excluded.value", (FSRS_PARAMETERS_KEY, json.dumps(list(fitted))))
            recompute_cards(conn, sorted({qid for qid, _, _ in reviews}), fitted)
    return FitResult(len(reviews), usable, default_loss, current_loss, fitted_loss, fitted, kept)
