"""The report card of a mock interview: score per topic, time per question, the exercise's checks,
and the three topics to study next. Data only; the CLI and the TUI render it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

REPORT_VERSION = 1
STUDY_NEXT = 3

# outcome of one question
RIGHT, WRONG, PARTIAL, MISSED = "right", "wrong", "partial", "missed"


@dataclass(frozen=True)
class QuestionResult:
    question_id: str
    topic: str
    type: str
    prompt: str
    outcome: str  # right | wrong | partial | missed
    score: float  # 0..1
    seconds: float | None  # None: never answered
    rating: int | None = None  # the FSRS rating it was saved with; None: not saved
    covered: int = 0  # cards: key points ticked
    points: int = 0  # cards: key points listed

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.question_id, "topic": self.topic, "type": self.type, "outcome": self.outcome,
                "score": round(self.score, 4), "seconds": None if self.seconds is None else round(self.seconds, 1),
                "rating": self.rating, "covered": self.covered, "points": self.points}


@dataclass(frozen=True)
class ExerciseCheck:
    title: str
    status: str
    message: str = ""


@dataclass(frozen=True)
class ExerciseResult:
    exercise_id: str
    title: str
    topic: str
    status: str  # pass | fail | error | not graded
    message: str | None
    checks: tuple[ExerciseCheck, ...]
    seconds: float

    @property
    def passed(self) -> int:
        return sum(1 for c in self.checks if c.status == "pass")

    @property
    def counted(self) -> int:
        return sum(1 for c in self.checks if c.status != "skip")

    @property
    def score(self) -> float:
        if self.status == "pass":
            return 1.0
        return self.passed / self.counted if self.counted else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.exercise_id, "topic": self.topic, "status": self.status, "message": self.message,
                "passed": self.passed, "total": self.counted, "score": round(self.score, 4),
                "seconds": round(self.seconds, 1),
                "checks": [{"title": c.title, "status": c.status, "message": c.message} for c in self.checks]}


@dataclass(frozen=True)
class TopicResult:
    slug: str
    title: str
    score: float  # 0..1, combined: the mean over the topic's questions and, if it had it, the exercise as one more
    asked: int
    answered: int
    right: int
    # The parts of the score, shown apart so an exercise does not hide how the questions went:
    question_score: float | None = None  # the mean over the topic's questions; None: none asked
    exercise: ExerciseResult | None = None  # the interview's exercise, when it was on this topic

    @property
    def exercise_score(self) -> float | None:
        return None if self.exercise is None else self.exercise.score

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "score": round(self.score, 4), "asked": self.asked,
                "answered": self.answered, "right": self.right,
                "question_score": None if self.question_score is None else round(self.question_score, 4),
                "exercise_score": None if self.exercise_score is None else round(self.exercise_score, 4)}


@dataclass
class ReportCard:
    started_at: datetime
    finished_at: datetime
    minutes: float
    score: float  # 0..1, each part by its share of the planned time
    question_score: float
    questions: list[QuestionResult]
    topics: list[TopicResult]
    exercise: ExerciseResult | None
    study_next: list[str]  # topic slugs, weakest first
    titles: dict[str, str] = field(default_factory=dict)  # topic slug -> title
    ended_early: bool = False

    @property
    def elapsed_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()

    def to_dict(self) -> dict[str, Any]:
        """What the store keeps: enough for the stats screen and an export, in plain JSON types."""
        return {
            "version": REPORT_VERSION, "minutes": self.minutes, "elapsed_s": round(self.elapsed_s, 1),
            "score": round(self.score, 4), "question_score": round(self.question_score, 4),
            "ended_early": self.ended_early,
            "topics": {t.slug: t.to_dict() for t in self.topics},
            "questions": [q.to_dict() for q in self.questions],
            "exercise": self.exercise.to_dict() if self.exercise else None,
            "study_next": list(self.study_next),
        }


def topic_results(questions: list[QuestionResult], exercise: ExerciseResult | None,
                  titles: dict[str, str]) -> list[TopicResult]:
    """One row per topic asked, in the order topics first came up; the combined score counts the
    exercise as one item beside the questions, and each row keeps both parts."""
    order: list[str] = []
    scores: dict[str, list[float]] = {}
    for q in questions:
        if q.topic not in scores:
            order.append(q.topic)
        scores.setdefault(q.topic, []).append(q.score)
    if exercise is not None:
        if exercise.topic not in scores:
            order.append(exercise.topic)
        scores.setdefault(exercise.topic, []).append(exercise.score)
    rows = []
    for slug in order:
        mine = [q for q in questions if q.topic == slug]
        rows.append(TopicResult(
            slug=slug, title=titles.get(slug, slug), score=sum(scores[slug]) / len(scores[slug]),
            asked=len(mine), answered=sum(1 for q in mine if q.outcome != MISSED),
            right=sum(1 for q in mine if q.outcome == RIGHT),
            question_score=sum(q.score for q in mine) / len(mine) if mine else None,
            exercise=exercise if exercise is not None and exercise.topic == slug else None,
        ))
    return rows


def study_next(topics: list[TopicResult], weights: dict[str, float], count: int = STUDY_NEXT) -> list[str]:
    """The lowest-scoring topics of the interview (weaker overall first on a tie), then, to make up
    the count, the weakest topics it did not reach. A topic scored full marks is never suggested."""
    ranked = sorted((t for t in topics if t.score < 1.0), key=lambda t: (t.score, -weights.get(t.slug, 0.0)))
    picked = [t.slug for t in ranked]
    asked = {t.slug for t in topics}
    picked += sorted((s for s in weights if s not in asked), key=lambda s: -weights[s])
    return picked[:count]
