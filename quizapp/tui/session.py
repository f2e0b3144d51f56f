"""What a study session produced: the quiz screen fills it in, the summary screen shows it."""

from __future__ import annotations

from dataclasses import dataclass, field

from quizapp.bank.model import Question


@dataclass
class Answered:
    question: Question
    correct: bool | None
    rating: int
    again: bool = False  # a re-ask after Again in the same session (saved as a review of its own)


@dataclass
class SessionResult:
    title: str
    topic: str | None = None  # None: the review queue
    answered: list[Answered] = field(default_factory=list)
    total: int = 0  # distinct questions in the session; re-asks after Again come on top

    @property
    def first_tries(self) -> list[Answered]:
        return [a for a in self.answered if not a.again]

    @property
    def reasks(self) -> int:
        return sum(1 for a in self.answered if a.again)
