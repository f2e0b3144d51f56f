"""What a mock interview asks: questions across topics, weighted towards the weak and the unseen,
sized to the minutes, then (from EXERCISE_FROM_MINUTES on, where the topics have one) one coding
exercise with a time box. Data only; no torch, no textual."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from quizapp.bank.model import Bank, Question
from quizapp.catalog import Exercise
from quizapp.study.schedule import retrievability
from quizapp.study.stats import TopicStats, compute_stats
from quizapp.study.store import Store

DEFAULT_MINUTES = 30
MIN_MINUTES, MAX_MINUTES = 3, 180
# Minutes a question is expected to take: an open question is written out, the others are picked.
EXPECTED_MINUTES = {"card": 2.0, "order": 1.5}
OTHER_MINUTES = 1.0
# The exercise gets this share of the interview, within these bounds; shorter interviews have none
# (in a shorter one, the smallest box would leave too little time for the questions).
EXERCISE_SHARE, EXERCISE_MIN, EXERCISE_MAX = 0.4, 2.0, 25.0
EXERCISE_FROM_MINUTES = 5
# Every topic keeps some chance: a strong topic still turns up now and then.
WEIGHT_FLOOR = 0.2
# How much a topic's weight drops each time it is picked, so one weak topic does not fill the interview.
REPEAT_DAMPING = 0.5
# Random jitter added to a question's recall when picking within a topic, so two interviews differ.
JITTER = 0.3


def expected_minutes(question: Question) -> float:
    return EXPECTED_MINUTES.get(question.type, OTHER_MINUTES)


@dataclass(frozen=True)
class Plan:
    minutes: float
    questions: tuple[Question, ...]
    exercise: Exercise | None
    exercise_minutes: float
    weights: dict[str, float] = field(default_factory=dict)  # topic -> weight; higher is weaker

    @property
    def question_minutes(self) -> float:
        return self.minutes - self.exercise_minutes


class PlanError(ValueError):
    """The interview cannot be planned as asked (an unknown topic, an empty bank); says why."""


def exercise_box(minutes: float) -> float:
    """The exercise's minutes in an interview this long; 0 (no exercise) under EXERCISE_FROM_MINUTES."""
    if minutes < EXERCISE_FROM_MINUTES:
        return 0.0
    return float(min(EXERCISE_MAX, max(EXERCISE_MIN, round(minutes * EXERCISE_SHARE))))


def has_exercise(catalog: dict[str, Exercise], topics: set[str]) -> bool:
    """Whether any exercise belongs to one of `topics`: without one, the interview is questions only."""
    return any(ex.topic in topics for ex in catalog.values())


def why_no_exercise(minutes: float, *, exercise_available: bool = True) -> str | None:
    """Why an interview of `minutes` has no coding exercise, in the learner's words; None when it has one."""
    if not exercise_box(minutes):
        return f"from {EXERCISE_FROM_MINUTES} minutes on, the interview ends with a coding exercise"
    if not exercise_available:
        return "none of these topics has one"
    return None


def exercise_promise(minutes: float, *, exercise_available: bool = True) -> str:
    """What an interview of `minutes` holds, said before it is planned; make_plan keeps to it exactly."""
    reason = why_no_exercise(minutes, exercise_available=exercise_available)
    if reason is not None:
        return f"Questions only, no coding exercise ({reason})."
    box = exercise_box(minutes)
    return f"{minutes - box:g} minutes of questions, then a coding exercise with a {box:g}-minute box."


def topic_weight(stats: TopicStats) -> float:
    """Higher for a topic the learner recalls badly, has seen little of, or gets wrong."""
    weakness = 1.0 - stats.mastery
    unseen = 1.0 - (stats.seen / stats.questions if stats.questions else 0.0)
    wrong = 1.0 - stats.accuracy if stats.accuracy is not None else 0.5
    return WEIGHT_FLOOR + weakness + unseen + 0.5 * wrong


def make_plan(bank: Bank, store: Store, catalog: dict[str, Exercise], *, minutes: float = DEFAULT_MINUTES,
              topics: tuple[str, ...] = (), now: datetime, seed: object = None) -> Plan:
    """Pick the questions and the exercise of one interview; raises PlanError when it cannot."""
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise PlanError(f"an interview lasts {MIN_MINUTES} to {MAX_MINUTES} minutes, not {minutes:g}")
    unknown = [t for t in topics if t not in bank.topics]
    if unknown:
        raise PlanError(f"no topic {', '.join(repr(t) for t in unknown)} (topics: {', '.join(bank.topics)})")
    wanted = set(topics) or set(bank.topics)
    stats = compute_stats(bank.outline(), store, now=now, exercise_ids=tuple(catalog))
    weights = {t.slug: topic_weight(t) for t in stats.topics if t.slug in wanted and t.questions}
    if not weights:
        raise PlanError("there are no questions to ask: the bank is empty")
    rng = random.Random(seed)
    box = exercise_box(minutes)
    due = due_exercises(store, catalog, wanted, now) if box else set()
    exercise = pick_exercise(catalog, stats, weights, wanted, rng, due) if box and has_exercise(catalog, wanted) else None
    exercise_minutes = box if exercise else 0.0
    questions = pick_questions(bank, store, weights, minutes - exercise_minutes, now, rng)
    return Plan(minutes=minutes, questions=tuple(questions), exercise=exercise,
                exercise_minutes=float(exercise_minutes), weights=weights)


def pick_questions(bank: Bank, store: Store, weights: dict[str, float], budget: float, now: datetime,
                   rng: random.Random) -> list[Question]:
    """Fill `budget` minutes: a weighted draw of topics, then within the topic the least recalled question.

    Open questions (cards) and checked ones take turns where a topic has both: an interview is
    mostly talking, but a few quick checks show what is known cold.
    """
    cards = store.cards()
    parameters = store.fsrs_parameters()
    recall = {qid: retrievability(card, now, parameters) for qid, (_, card) in cards.items() if qid in bank.questions}
    suspended = store.suspended_ids()  # a suspended question is in no interview
    left = {slug: [q for q in bank.topic_questions(slug) if q.id not in suspended] for slug in weights}
    draw = dict(weights)
    chosen: list[Question] = []
    spent, want_card = 0.0, True
    while True:
        open_topics = [slug for slug, qs in left.items() if qs]
        if not open_topics:
            break
        slug = rng.choices(open_topics, weights=[draw[s] for s in open_topics])[0]
        pool = left[slug]
        kind = [q for q in pool if (q.type == "card") == want_card] or pool
        question = min(kind, key=lambda q: recall.get(q.id, 0.0) + rng.random() * JITTER)
        if chosen and spent + expected_minutes(question) > budget:
            # Too long for what is left: a shorter question from anywhere may still fit.
            shorter = [q for qs in left.values() for q in qs if spent + expected_minutes(q) <= budget]
            if not shorter:
                break
            question = min(shorter, key=lambda q: (-draw[q.topic], recall.get(q.id, 0.0)))
            slug = question.topic
        left[slug].remove(question)
        chosen.append(question)
        spent += expected_minutes(question)
        draw[slug] *= REPEAT_DAMPING
        want_card = not want_card
    return chosen


def due_exercises(store: Store, catalog: dict[str, Exercise], wanted: set[str], now: datetime) -> set[str]:
    """The ids of the interview's exercises that are due for review now."""
    from quizapp.study.due import exercise_state

    return {ex.id for ex in catalog.values() if ex.topic in wanted and exercise_state(store, ex).is_due(now)}


def pick_exercise(catalog: dict[str, Exercise], stats, weights: dict[str, float], wanted: set[str],
                  rng: random.Random, due: set[str] = frozenset()) -> Exercise | None:
    """An exercise in the interview's topics: one due for review first (writing it again under time
    is that review), else one not yet passed where possible; the weakest topic first."""
    candidates = [ex for ex in catalog.values() if ex.topic in wanted]
    if not candidates:
        return None
    passed = {e.exercise_id for e in stats.exercises if e.passed}
    fresh = ([ex for ex in candidates if ex.id in due] or [ex for ex in candidates if ex.id not in passed]
             or candidates)
    return max(fresh, key=lambda ex: (weights.get(ex.topic, WEIGHT_FLOOR), rng.random()))
