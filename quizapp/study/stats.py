"""Progress figures: per topic, streak, exercises. Data only; rendering lives elsewhere."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from quizapp.bank.outline import BankOutline
from quizapp.study.cards import card_problem
from quizapp.study.store import ExerciseEvent, GradeEvent, Store, utcnow

if TYPE_CHECKING:
    from quizapp.study.due import DueQuestion
    from quizapp.study.exercise_schedule import ExerciseState

# Said in one line wherever mastery is shown (home, the stats screen, `quizapp stats`).
MASTERY_SHORT = "the share you would recall a week from now, 90% sure"
MASTERY_MEANING = ("Mastery: the share of a topic's questions you would recall a week from now, 90% sure by FSRS; "
                   "questions not yet seen count as not known.")
# What is on its way to mastery, said beside it: a newcomer's mastery stays 0% for days.
LEARNING_MEANING = "Learning: questions you have answered (FSRS keeps a card for them) and not yet mastered."


# NamedTuples, not dataclasses: these records are built on the way to the first screen, and each
# dataclass compiles its generated methods when the module is imported (1.5 ms apiece here).
class TopicStats(NamedTuple):
    slug: str
    title: str
    questions: int
    seen: int  # distinct questions answered at least once
    attempts: int
    checked: int  # attempts that were checked right/wrong (cards are self-rated)
    correct: int
    due: int  # questions due now (due.scheduled_questions), the ones failed checks asked for included
    mastery: float  # share of the topic's questions held for a week (schedule.held); unseen count 0
    suspended_new: int = 0  # questions not yet seen that the learner suspended: not counted as new
    asked: int = 0  # of the questions due now, the ones a failed check asked for
    mastered: int = 0  # questions held for a week: the count behind `mastery`

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.checked if self.checked else None

    @property
    def new(self) -> int:
        """Questions never answered and not suspended (one a failed check asked for is due as well:
        its first answer still takes a place of the day's new questions)."""
        return self.questions - self.seen - self.suspended_new

    @property
    def learning(self) -> int:
        """Questions on their way: answered at least once (FSRS keeps a card for them, in any of its
        states: learning, review or relearning) and not mastered yet."""
        return self.seen - self.mastered


class ExerciseStats(NamedTuple):
    exercise_id: str
    attempts: int
    passed: bool
    best_passed: int
    best_total: int
    last_status: str | None


class Stats(NamedTuple):
    topics: list[TopicStats]
    exercises: list[ExerciseStats]
    streak_days: int
    studied_today: bool
    reviews_per_day: dict[date, int]
    accuracy_per_day: dict[date, float]
    # The learner's pace: the median time of their latest answers (PACE_ANSWERS of them), in seconds;
    # None before any answer was timed.
    answer_seconds: float | None = None
    # Every question on the schedule (due.scheduled_questions), by due: what `due` counts and what
    # home's week ahead is drawn from.
    scheduled: tuple[DueQuestion, ...] = ()
    now: datetime | None = None  # the moment the figures were taken

    @property
    def due(self) -> int:
        """Questions due now, the ones failed checks asked for included (one figure everywhere)."""
        return sum(t.due for t in self.topics)

    @property
    def asked(self) -> int:
        """Of the questions due now, the ones a failed check asked for."""
        return sum(t.asked for t in self.topics)

    @property
    def learning(self) -> int:
        return sum(t.learning for t in self.topics)

    @property
    def mastered(self) -> int:
        return sum(t.mastered for t in self.topics)

    @property
    def new(self) -> int:
        return sum(t.new for t in self.topics)

    @property
    def attempts(self) -> int:
        return sum(t.attempts for t in self.topics)

    @property
    def accuracy(self) -> float | None:
        checked = sum(t.checked for t in self.topics)
        return sum(t.correct for t in self.topics) / checked if checked else None

    @property
    def exercises_passed(self) -> int:
        return sum(1 for e in self.exercises if e.passed)


PACE_ANSWERS = 200  # the pace is read from this many of the latest timed answers
BREAK_S = 30 * 60  # a pause this long between two grades is a break, not time spent on the exercise


# What fsrs.Card.to_dict() writes, and the bounds within which every reader's date arithmetic holds.
def store_version(store: Store) -> tuple[int, int]:
    """Changes to the store, as SQLite counts them: commits by other connections (the CLI, another
    window) and rows this one changed. Two equal values: the figures read between them still hold.
    One query, for a screen that looks now and then whether to read its figures again."""
    with store.snapshot() as conn:
        return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes


def damaged_cards(store: Store) -> dict[str, str]:
    """question id -> why its stored card cannot be read (see card_problem); empty when all are sound."""
    return {qid: problem for qid, (_, card) in store.cards().items() if (problem := card_problem(card))}


def median(values: list[float]) -> float:
    """The middle value (statistics.median, without importing statistics on the way to the first screen)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def local_day(stamp: str) -> date:
    return datetime.fromisoformat(stamp).astimezone().date()


def streak(days: set[date], today: date) -> int:
    """Consecutive study days ending today, or ending yesterday while today is still open."""
    day = today if today in days else today - timedelta(days=1)
    count = 0
    while day in days:
        count += 1
        day -= timedelta(days=1)
    return count


def compute_stats(outline: BankOutline, store: Store, *, now: datetime | None = None,
                  exercise_ids: tuple[str, ...] = ()) -> Stats:
    """Figures for the bank described by `outline` (a Bank gives it with `bank.outline()`)."""
    now = now or utcnow()
    cards = store.cards()
    answers = store.answers()
    suspended = store.suspended_ids()  # in no due or new count until unsuspended
    by_topic_attempts: Counter = Counter()
    by_topic_checked: Counter = Counter()
    by_topic_correct: Counter = Counter()
    per_day: Counter = Counter()
    per_day_checked: Counter = Counter()
    per_day_correct: Counter = Counter()
    durations: list[int] = []
    topic_of = outline.topic_of()
    for row in answers:
        if row["duration_ms"]:
            durations.append(row["duration_ms"])
        topic = topic_of.get(row["question_id"], row["topic"])
        day = local_day(row["answered_at"])
        by_topic_attempts[topic] += 1
        per_day[day] += 1
        if row["correct"] is not None:
            by_topic_checked[topic] += 1
            per_day_checked[day] += 1
            by_topic_correct[topic] += row["correct"]
            per_day_correct[day] += row["correct"]

    grades = store.grade_events()
    scheduled: list[DueQuestion] = []
    if cards:  # fsrs loads only when a card is there to score: a new learner's home draws without it
        from quizapp.study.schedule import held, readable_cards

        cards = readable_cards(cards, answers, store.fsrs_parameters())
    if cards or grades:  # nothing is due before a first answer or grade
        from quizapp.study.due import scheduled_questions

        scheduled = scheduled_questions(store, topic_of, cards=cards, grades=grades)
    due_now: Counter = Counter()
    asked_now: Counter = Counter()
    for q in scheduled:
        if q.due <= now:
            due_now[q.topic] += 1
            if q.asked_by:
                asked_now[q.topic] += 1
    topics = []
    for slug, topic in outline.topics.items():
        ids = topic.question_ids
        seen = [qid for qid in ids if qid in cards]
        known = sum(1 for qid in seen if held(cards[qid][1], now))
        topics.append(TopicStats(
            slug=slug, title=topic.title, questions=len(ids), seen=len(seen),
            attempts=by_topic_attempts[slug], checked=by_topic_checked[slug], correct=by_topic_correct[slug],
            due=due_now[slug], mastery=known / len(ids) if ids else 0.0,
            suspended_new=sum(1 for qid in ids if qid in suspended and qid not in cards) if suspended else 0,
            asked=asked_now[slug], mastered=known,
        ))

    days = {local_day(stamp) for stamp in store.activity_days_utc()}
    today = now.astimezone().date()
    return Stats(
        topics=topics,
        exercises=exercise_stats(store, exercise_ids),
        streak_days=streak(days, today),
        studied_today=today in days,
        reviews_per_day=dict(sorted(per_day.items())),
        accuracy_per_day={d: per_day_correct[d] / n for d, n in sorted(per_day_checked.items()) if n},
        answer_seconds=median(durations[-PACE_ANSWERS:]) / 1000 if durations else None,
        scheduled=tuple(scheduled),
        now=now,
    )


def exercise_stats(store: Store, exercise_ids: tuple[str, ...] = ()) -> list[ExerciseStats]:
    """One row per known exercise (in the given order), then any graded exercise not listed."""
    grades = store.grades()
    ids = list(exercise_ids) + sorted({g.exercise_id for g in grades} - set(exercise_ids))
    rows = []
    for ex_id in ids:
        mine = [g for g in grades if g.exercise_id == ex_id]
        best = max(mine, key=lambda g: (g.status == "pass", g.checks_passed), default=None)
        rows.append(ExerciseStats(
            exercise_id=ex_id, attempts=len(mine), passed=any(g.status == "pass" for g in mine),
            best_passed=best.checks_passed if best else 0, best_total=best.checks_total if best else 0,
            last_status=mine[-1].status if mine else None,
        ))
    return rows


def exercise_seconds(states: Iterable[ExerciseState], grades: Iterable[GradeEvent],
                     events: Iterable[ExerciseEvent], *, break_s: float = BREAK_S) -> float | None:
    """The learner's pace at exercises: the median time a passed round took, from its first grade (or
    hint, or look at the reference) to its pass; None before any pass. A round runs from the review
    before it (or the first grade) to a passed review. Gaps longer than `break_s` between two of its
    moments are breaks and do not count, so a fail left overnight does not make a round last a day.
    The writing before the first grade leaves no trace in the history: a first-try pass counts 0."""
    moments: dict[str, list[datetime]] = {}
    for grade in grades:
        moments.setdefault(grade.exercise_id, []).append(datetime.fromisoformat(grade.graded_at))
    for event in events:
        moments.setdefault(event.exercise_id, []).append(datetime.fromisoformat(event.at))
    spans = []
    for state in states:
        mine = sorted(moments.get(state.exercise_id, ()))
        start = None
        for review in state.reviews:
            if review.passed:
                times = [t for t in mine if (start is None or t > start) and t <= review.at]
                spans.append(sum(gap for a, b in zip(times, times[1:]) if (gap := (b - a).total_seconds()) <= break_s))
            start = review.at
    return median(spans) if spans else None
