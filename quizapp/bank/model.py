"""The question model: what a loaded, validated question is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from quizapp.bank.outline import BankOutline

QUESTION_TYPES = ("single", "multi", "numeric", "order", "text", "card")

# Topic and BankError are NamedTuples, cheaper to define than dataclasses on the way to the first
# screen; Question stays a dataclass, as its why_not dict is left out of its hash and equality.


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    difficulty: int
    prompt: str
    explanation: str
    topic: str
    source: Path
    line: int
    tags: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    answer: Any = None  # int | tuple[int, ...] | float | tuple[str, ...] | None, by type
    tolerance: float = 0.0
    items: tuple[str, ...] = ()
    # single/multi: choice index -> why that wrong choice is wrong (shown first for the pick)
    why_not: dict[int, str] = field(default_factory=dict, hash=False, compare=False)
    # card: the points a good answer covers; ticking them suggests a rating
    key_points: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        return f"{self.source}:{self.line}"


class Topic(NamedTuple):
    slug: str
    title: str
    source: Path
    questions: tuple[Question, ...]


class BankError(NamedTuple):
    """One problem in one question file, printed as `file:line: reason`."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass
class Bank:
    topics: dict[str, Topic] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    errors: list[BankError] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    # `quizapp bank check` prints these; they never keep a file or a question out
    warnings: list[BankError] = field(default_factory=list)

    def topic_questions(self, slug: str) -> tuple[Question, ...]:
        topic = self.topics.get(slug)
        return topic.questions if topic else ()

    def outline(self) -> BankOutline:
        from quizapp.bank.outline import BankOutline, TopicOutline

        return BankOutline(
            topics={slug: TopicOutline(slug, topic.title, tuple(q.id for q in topic.questions))
                    for slug, topic in self.topics.items()},
            error_count=len(self.errors), error_files=len({e.path for e in self.errors}))
