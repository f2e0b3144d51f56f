"""Search the question bank: every word of the query must appear (case-insensitive) in a question's
prompt, choices (or an order question's items), explanation or tags; the best matches first.

Headless (no textual): `quizapp search` and the app's bank browser both use it. The bank's text is
lowered once per bank and kept, so a search while the learner types costs a scan of short strings.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from typing import NamedTuple

from quizapp.bank.model import Bank, Question

# How much a word found in each field counts; a word found whole counts double a word found inside another.
FIELD_WEIGHTS = (("tags", 4.0), ("prompt", 3.0), ("choices", 2.0), ("explanation", 1.0))
WHOLE_WORD_BONUS = 2.0
ID_WEIGHT = 3.0  # a question's id is searched too: a learner types what `quizapp flag` printed

_WORD = re.compile(r"\w[\w.+-]*\w|\w", re.UNICODE)
# Everything between words (as _WORD reads them): one substitution lays a field out as its words.
_BETWEEN = re.compile(r"[^\w.+-]+|(?<!\w)[.+-]+|[.+-]+(?!\w)", re.UNICODE)


class Hit(NamedTuple):
    question: Question
    score: float


class _Indexed(NamedTuple):
    question: Question
    fields: tuple[tuple[str, float, str], ...]  # (field name, weight, lowered text with spaces around)


# id(bank) -> (a weak reference to the bank, its index): a Bank is a plain dataclass (not hashable).
_INDEXES: dict[int, tuple[weakref.ref, list[_Indexed]]] = {}


def query_words(query: str) -> list[str]:
    """The words of a query, lowered: runs of letters and digits (with . + - inside, as in 'bf16', 'fp8-e4m3')."""
    return [w.lower() for w in _WORD.findall(query)]


def _index(bank: Bank) -> list[_Indexed]:
    kept = _INDEXES.get(id(bank))
    if kept is not None and kept[0]() is bank and len(kept[1]) == len(bank.questions):
        return kept[1]
    indexed = [_Indexed(q, _fields(q)) for q in bank.questions.values()]
    key = id(bank)
    _INDEXES[key] = (weakref.ref(bank, lambda _: _INDEXES.pop(key, None)), indexed)
    return indexed


def _fields(q: Question) -> tuple[tuple[str, float, str], ...]:
    texts = {"tags": " ".join(q.tags), "prompt": q.prompt, "choices": " ".join((*q.choices, *q.items)),
             "explanation": q.explanation}
    out = [(name, weight, f" {_BETWEEN.sub(' ', texts[name].lower()).strip()} ") for name, weight in FIELD_WEIGHTS]
    out.append(("id", ID_WEIGHT, f" {q.id.lower()} "))
    return tuple(out)


def _word_score(word: str, fields: tuple[tuple[str, float, str], ...]) -> float:
    """The word's best showing across the fields; 0 when it is in none."""
    best = 0.0
    whole = f" {word} "
    for _, weight, text in fields:
        if word in text:
            score = weight * (WHOLE_WORD_BONUS if whole in text else 1.0)
            if score > best:
                best = score
    return best


def search(bank: Bank, query: str, *, topic: str | None = None, limit: int | None = None) -> list[Hit]:
    """The questions matching every word of `query` (of `topic` when given), best first; ties keep the
    bank's order. An empty query matches every question (in bank order)."""
    words = list(dict.fromkeys(query_words(query)))
    hits = []
    for order, entry in enumerate(_index(bank)):
        if topic is not None and entry.question.topic != topic:
            continue
        score = 0.0
        for word in words:
            found = _word_score(word, entry.fields)
            if not found:
                break
            score += found
        else:
            hits.append((-score, order, Hit(entry.question, score)))
    hits.sort(key=lambda h: h[:2])
    found = [hit for *_, hit in hits]
    return found if limit is None else found[:limit]


def matched_fields(question: Question, query: str) -> list[str]:
    """Where the query's words were found in `question` (field names, in FIELD_WEIGHTS order)."""
    words = query_words(query)
    return [name for name, _, text in _fields(question) if any(w in text for w in words)]


def as_json(hits: Iterable[Hit]) -> list[dict]:
    """`quizapp search --json`: a list of {"id", "topic", "type", "prompt"}."""
    return [{"id": h.question.id, "topic": h.question.topic, "type": h.question.type, "prompt": h.question.prompt}
            for h in hits]
