"""What to study next: cards that are due, then questions never seen."""

from __future__ import annotations

from datetime import datetime

from quizapp.bank.model import Bank, Question
from quizapp.study.store import Store, iso, utcnow


def study_queue(bank: Bank, store: Store, *, topic: str | None = None, now: datetime | None = None,
                limit: int | None = None, include_new: bool = True, new_limit: int | None = None) -> list[Question]:
    """The questions a failed check asked for (oldest request first), then due cards (most overdue
    first), then new questions (easiest first, topics taking turns), at most `new_limit` of them
    (None: no cap; the front ends pass what is left of the daily limit, see limits.new_today).
    A suspended question is never in it."""
    from quizapp.study.due import review_soon

    now_iso = iso(now or utcnow())
    cards = store.cards()
    suspended = store.suspended_ids()

    def wanted(question: Question | None) -> bool:
        return question is not None and (topic is None or question.topic == topic) and question.id not in suspended

    asked = sorted((since, qid) for qid, (since, _) in review_soon(store.grade_events(), store.last_answered()).items())
    queue = [bank.questions[qid] for _, qid in asked if wanted(bank.questions.get(qid))]
    first = {q.id for q in queue}
    due = sorted((due_at, qid) for qid, (due_at, _) in cards.items() if due_at <= now_iso and qid not in first)
    queue += [bank.questions[qid] for _, qid in due if wanted(bank.questions.get(qid))]
    if include_new and new_limit != 0:
        fresh = _interleaved(q for q in bank.questions.values()
                             if q.id not in cards and q.id not in first and wanted(q))
        queue += fresh if new_limit is None else fresh[:max(0, new_limit)]
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


AGAIN = 1  # the FSRS rating "Again"
AGAIN_GAP = 3  # a question rated Again comes back after this many others
MAX_REASKS = 3  # and at most this many times in one session


def requeue_again(pending: list, question, rating: int, reasked: dict[str, int], *,
                  gap: int = AGAIN_GAP, most: int = MAX_REASKS) -> bool:
    """Bring a question rated Again back later in the same session, as Anki does; True if it will.

    `pending` is the rest of the session's running order (the question just answered already taken
    off its front); it is changed in place. A question rated Again (1) goes back in after `gap` other
    questions, or at the end when fewer are left (straight away when none are), so the learner meets
    it again before the session ends. Hard or better ends its run. It comes back at most `most` times
    a session: `reasked` maps question id -> how often it was put back so far; the caller keeps one
    dict for the whole session and this function updates it. Each time it is asked again is answered,
    rated and saved as a review of its own. Works for anything with an `id` (questions, exercises).
    """
    if rating != AGAIN or reasked.get(question.id, 0) >= most:
        return False
    reasked[question.id] = reasked.get(question.id, 0) + 1
    pending.insert(min(max(gap, 0), len(pending)), question)
    return True
