"""What a study session produced: the quiz screen fills it in, the summary screen shows it."""

from __future__ import annotations

from dataclasses import dataclass, field

from quizapp.bank.model import Question


@dataclass
class Answered:
    question: Question
    correct: bool | None
    rating: int


@dataclass
class SessionResult:
    title: str
    topic: str | None = None  # None: the review queue
    answered: list[Answered] = field(default_factory=list)
    total: int = 0
