"""What to study next: cards that are due, then questions never seen."""

from __future__ import annotations

from datetime import datetime

from quizapp.bank.model import Bank, Question
from quizapp.study.store import Store, iso, utcnow


def study_queue(bank: Bank, store: Store, *, topic: str | None = None, now: datetime | None = None,
                limit: int | None = None, include_new: bool = True) -> list[Question]:
    """Due cards (most overdue first), then new questions (easiest first, topics taking turns)."""
    now_iso = iso(now or utcnow())
    cards = store.cards()

    def wanted(question: Question | None) -> bool:
        return question is not None and (topic is None or question.topic == topic)

    due = sorted((due_at, qid) for qid, (due_at, _) in cards.items() if due_at <= now_iso)
    queue = [bank.questions[qid] for _, qid in due if wanted(bank.questions.get(qid))]
    if include_new:
        queue += _interleaved(q for q in bank.questions.values() if q.id not in cards and wanted(q))
    return queue if limit is None else queue[:limit]


def _interleaved(fresh) -> list[Question]:
    """Easiest first; within a level, topics take turns so a review is not one topic's start."""
    topics: dict[str, int] = {}
    rank: dict[tuple[str, int], int] = {}
    keyed = []
    for q in fresh:  # bank order
        topic_index = topics.setdefault(q.topic, len(topics))
        nth = rank[q.topic, q.difficulty] = rank.get((q.topic, q.difficulty), -1) + 1
        keyed.append(((q.difficulty, nth, topic_index), q))
    return [q for _, q in sorted(keyed, key=lambda kq: kq[0])]
