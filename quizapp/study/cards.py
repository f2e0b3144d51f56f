"""Reading a stored FSRS card safely: whether its JSON is one the scheduler can read.

Its own module, below `schedule`, `stats` and `due` alike, which all look cards over before reading
them; it imports neither fsrs nor any of them.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import lru_cache

CARD_KEYS = ("card_id", "state", "step", "stability", "difficulty", "due", "last_review")
CARD_STATES = (1, 2, 3)  # Learning, Review, Relearning
MAX_STABILITY_DAYS = 1_000_000.0  # FSRS caps intervals at 36,500 days; this only keeps dates in range


@lru_cache(maxsize=8192)  # every reader checks a card before parsing it; a redraw checks them all again
def card_problem(card_json) -> str | None:
    """Why a stored card (the `cards.card` JSON) is not one the scheduler can read, or None when it is.

    Kept free of fsrs, so that the CLI can look over every card when it opens the store without
    paying for fsrs's import. A damaged card is read as rebuilt from the question's answers
    (schedule.readable_cards), or as unseen when it has none.
    """
    import json

    if not isinstance(card_json, str):
        return "not text"
    try:
        card = json.loads(card_json)
    except (ValueError, RecursionError):
        return "not valid JSON"
    if not isinstance(card, dict):
        return "not a card (a JSON object)"
    missing = [key for key in CARD_KEYS if key not in card]
    if missing:
        return f"not a card: no \"{missing[0]}\""
    if not _whole(card["card_id"]):
        return "card_id is not a whole number"
    state = card["state"]
    if not _whole(state) or state not in CARD_STATES:
        return "state is not 1, 2 or 3"
    step = card["step"]
    if not (step is None or _whole(step) and 0 <= step < 1000) or (step is None and state != 2):
        return "step is not a learning step"
    for name, low, high in (("stability", 0.0, MAX_STABILITY_DAYS), ("difficulty", 1.0, 10.0)):
        value = card[name]
        if value is None or _real(value) and value == 0:  # Card.from_dict reads a zero as "not yet known"
            if state != 1:
                return f"{name} is missing from a card past its first learning steps"
            continue
        if not _real(value) or not low <= value <= high:
            return f"{name} is not a number from {low:g} to {high:g}"
    due = _moment(card["due"])
    last_review = None if card["last_review"] is None else _moment(card["last_review"])
    if due is None or card["last_review"] is not None and last_review is None:
        return "a date is not an ISO 8601 time with its UTC offset"
    try:  # what the readers compute: the day a card's hold runs out, a due date shown in local time
        if last_review is not None and card["stability"]:
            last_review + timedelta(days=card["stability"])
    except OverflowError:
        return "a date is out of range"
    if not 1 < due.year < 9999:
        return "a date is out of range"
    return None


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _moment(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
