"""What to study next: cards that are due, then questions never seen."""

from __future__ import annotations

from datetime import datetime

from quizapp.bank.model import Bank, Question
from quizapp.study.store import Store, iso, utcnow


def study_queue(bank: Bank, store: Store, *, topic: str | None = None, now: datetime | None = None,
                limit: int | None = None, include_new: bool = True) -> list[Question]:
    """Due cards (most overdue first), then new questions (easiest first, in bank order)."""
    now_iso = iso(now or utcnow())
    cards = store.cards()

    def wanted(question: Question | None) -> bool:
        return question is not None and (topic is None or question.topic == topic)

    due = sorted((due_at, qid) for qid, (due_at, _) in cards.items() if due_at <= now_iso)
    queue = [bank.questions[qid] for _, qid in due if wanted(bank.questions.get(qid))]
    if include_new:
        fresh = [q for q in bank.questions.values() if q.id not in cards and wanted(q)]
        queue += sorted(fresh, key=lambda q: q.difficulty)  # sorted() is stable: bank order within a level
    return queue if limit is None else queue[:limit]
