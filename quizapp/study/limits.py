"""The daily limit of new questions: how many a learner may start today, counted per local day
across sessions (a question is new on the local day of its first answer). An interview is exempt."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from quizapp.study.store import Store


class NewToday(NamedTuple):
    limit: int  # the learner's daily limit (`quizapp config new-per-day N`)
    taken: int  # questions first answered today (local day)

    @property
    def left(self) -> int:
        return max(0, self.limit - self.taken)


def new_today(store: Store, now: datetime) -> NewToday:
    """The daily limit and how much of it today's first answers used (local day of `now`)."""
    today = now.astimezone().date()
    taken = sum(1 for first in store.first_answered().values()
                if datetime.fromisoformat(first).astimezone().date() == today)
    return NewToday(store.new_per_day(), taken)
