"""Today's plan and the week ahead, for the home screen: what is due and how long it takes at the
learner's own pace. Data only (no Textual); the home screen draws it.

The questions come from the stats (one read, and the same "due now" as every other screen); a
learner without a grade has no exercise on the schedule, and their plan skips the replay of
exercises, which loads fsrs (the first screen of a new learner leaves the scheduler unloaded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, NamedTuple

from quizapp.study.stats import Stats
from quizapp.study.store import Store
from quizapp.words import plural

if TYPE_CHECKING:
    from quizapp.catalog import Exercise
    from quizapp.study.exercise_schedule import ExerciseState

WEEK_DAYS = 7
DAY_NAMES = ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su")  # fixed, not the locale's: the row's width is known
# Until the history says otherwise. A first-try pass leaves no trace of the writing before the first
# grade (see stats.exercise_seconds), so a measured exercise counts at least MIN_EXERCISE_S.
DEFAULT_CARD_S = 20.0
DEFAULT_EXERCISE_S = 15 * 60.0
MIN_EXERCISE_S = 5 * 60.0


class DayLoad(NamedTuple):
    day: date
    cards: int
    exercises: int


class HomePlan(NamedTuple):
    cards_now: int  # questions due now, the ones a failed check asked for included
    asked_now: int  # of those, asked for by a failed check
    exercises_now: int
    week: list[DayLoad]  # today first: what is due by the end of each local day (today: overdue too)
    card_s: float | None  # the learner's pace, measured; None: not yet
    exercise_s: float | None
    next_due: datetime | None = None  # the next moment a question or an exercise comes due; None: none ahead

    @property
    def today(self) -> DayLoad:
        return self.week[0]

    def seconds_today(self) -> float:
        card = self.card_s if self.card_s is not None else DEFAULT_CARD_S
        exercise = max(self.exercise_s, MIN_EXERCISE_S) if self.exercise_s is not None else DEFAULT_EXERCISE_S
        return self.today.cards * card + self.today.exercises * exercise

    def guessed(self) -> list[str]:
        """The rates today's estimate takes as a default, in words (empty: all measured)."""
        out = []
        if self.today.cards and self.card_s is None:
            out.append(f"{DEFAULT_CARD_S:g} s a card")
        if self.today.exercises and self.exercise_s is None:
            out.append(f"{DEFAULT_EXERCISE_S / 60:g} min an exercise")
        return out


def about(seconds: float) -> str:
    """'about 25 min', 'about 1 h 40 min': whole minutes, at least one; five-minute steps past an hour."""
    minutes = max(1, math.ceil(seconds / 60))
    if minutes < 60:
        return f"about {minutes} min"
    minutes = round(minutes / 5) * 5
    hours, rest = divmod(minutes, 60)
    return f"about {hours} h" + (f" {rest} min" if rest else "")


def span(seconds: float) -> str:
    """'25 s', '12 min', '1 h 5 min': a measured time, rounded."""
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")


def home_plan(store: Store, catalog: Mapping[str, Exercise], stats: Stats, now: datetime) -> HomePlan:
    """Today and the week ahead from `stats` (its questions on the schedule, at its moment, else at
    `now`) and the exercises' schedules."""
    now = stats.now or now
    exercise_s = None
    exercises: list[datetime] = []
    if any(e.attempts for e in stats.exercises):
        from quizapp.study.stats import exercise_seconds

        states = exercise_schedules(store, catalog)
        exercises = [state.due for state in states.values() if state.due is not None]
        exercise_s = exercise_seconds(states.values(), store.grade_events(), store.exercise_events())
    today = now.astimezone().date()
    cards, tasks = [0] * WEEK_DAYS, [0] * WEEK_DAYS
    for moments, counts in (([q.due for q in stats.scheduled], cards), (exercises, tasks)):
        for due in moments:
            ahead = max(0, (due.astimezone().date() - today).days)
            if ahead < WEEK_DAYS:
                counts[ahead] += 1
    week = [DayLoad(date.fromordinal(today.toordinal() + n), cards[n], tasks[n]) for n in range(WEEK_DAYS)]
    coming = [q.due for q in stats.scheduled if q.due > now] + [due for due in exercises if due > now]
    return HomePlan(stats.due, stats.asked, sum(1 for due in exercises if due <= now), week,
                    stats.answer_seconds, exercise_s, min(coming, default=None))


def exercise_schedules(store: Store, catalog: Mapping[str, Exercise]) -> dict[str, ExerciseState]:
    """Each exercise of the catalog's schedule, replayed from one read of the history; empty (and
    fsrs left unloaded) when nothing was ever graded."""
    grades = store.grade_events()
    if not grades:
        return {}
    from quizapp.study.due import catalog_schedules

    return catalog_schedules(catalog, grades, store.exercise_events())


def today_lines(plan: HomePlan, new_questions: int) -> list[str]:
    """What today holds, in one line; the longest wording first, then shorter ones for a narrow screen."""
    today = plan.today
    if not today.cards and not today.exercises:
        return ["Today: nothing due." + (" Press r for new questions." if new_questions else "")]
    guessed = plan.guessed()
    pace = f" (a first guess: {', '.join(guessed)})" if guessed else " at your pace"
    out = []
    for asked in ([f" ({plan.asked_now} from failed checks)"] if plan.asked_now else []) + [""]:
        parts = [plural(today.cards, "card") + asked] if today.cards else []
        parts += [plural(today.exercises, "exercise")] if today.exercises else []
        out.append(f"Today: {' and '.join(parts)}, {about(plan.seconds_today())}{pace}")
    return out
