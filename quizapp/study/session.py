"""One study session as it runs: the running order, each answer checked, rated and saved as a review
at once, a question rated Again brought back, and what the session came to. No textual: `quizapp
review` and the app's quiz screen both drive this.

`reply_problem` is the rule every front end that checks a typed answer asks first (the quiz, review,
both interviews): a reply it cannot read is asked again, never counted wrong.

Time comes from an injected clock, so tests fix it: it stamps each review and times each answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from quizapp.bank.answers import Verdict, check_answer, numeric_problem
from quizapp.bank.model import Question
from quizapp.study.keypoints import rating_from_key_points
from quizapp.study.queue import requeue_again
from quizapp.study.schedule import default_rating, record_review
from quizapp.study.store import Store, StoreError, UndoRefused, new_uid

# What a refused save raises (another process holding the write lock, a full disk): the answer stays
# pending, so the front end can say so and try again. The store wraps every sqlite3 error in its own.
SAVE_ERRORS = (StoreError,)
UNDO_ERRORS = (StoreError, UndoRefused)


class AskAgain(ValueError):
    """The reply cannot be checked: the question is asked again. The message says why, to show."""


def reply_problem(question: Question, response: Any) -> str | None:
    """Why `response` cannot be checked and the question is asked again, as a sentence to show; None
    when it can be checked. A numeric answer that is not a number ("1 GiB", "about 65k") is not a
    wrong answer: the learner meant a number and is asked for it alone, as the checker reads numbers."""
    if question.type == "numeric":
        return numeric_problem(response)
    return None


@dataclass
class Answered:
    question: Question
    correct: bool | None
    rating: int
    again: bool = False  # a re-ask after Again in the same session (saved as a review of its own)
    due: datetime | None = None  # when FSRS brings the question back
    requeued: bool = False  # rated Again and put back into this session
    uid: str | None = None  # the saved answer's id in the store (what undo takes back)


@dataclass
class SessionResult:
    title: str
    topic: str | None = None  # None: the review queue
    answered: list[Answered] = field(default_factory=list)  # every saved answer, in order
    total: int = 0  # distinct questions in the session; re-asks after Again come on top

    @property
    def first_tries(self) -> list[Answered]:
        """The score counts these: a re-ask follows the answer just shown."""
        return [a for a in self.answered if not a.again]

    @property
    def checked(self) -> list[Answered]:
        """First tries with a verdict (a card has none: the learner rates it)."""
        return [a for a in self.first_tries if a.correct is not None]

    @property
    def right(self) -> int:
        return sum(1 for a in self.first_tries if a.correct)

    @property
    def wrong(self) -> int:
        return sum(1 for a in self.first_tries if a.correct is False)

    @property
    def reasks(self) -> int:
        return sum(1 for a in self.answered if a.again)


@dataclass
class Pending:
    """An answer checked but not yet rated: saved by `rate`, or with the learner's rating on leaving."""

    question: Question
    verdict: Verdict
    response: Any
    duration_ms: int
    suggested: int  # the rating the answer suggests (a card's key points: the rating the ticks give)
    at: datetime | None = None  # when it was first offered to the store: a retry saves it at that moment
    uid: str | None = None  # the answer's id, made on the first try to save it: a retry saves it once


class StudySession:
    """Drive it with `current`, then show() / check() / tick() (a card's key points) / rate(), then next();
    leave() ends it, keeping an answer checked but not rated. `result` holds what it came to."""

    def __init__(self, questions: Iterable[Question], store: Store, *, clock: Callable[[], datetime],
                 title: str, topic: str | None = None,
                 record: Callable[..., datetime] = record_review) -> None:
        self.questions = list(questions)  # the running order: a question rated Again goes back into it
        self.store = store
        self.clock = clock
        self.record = record  # how one review is written (record_review's signature)
        self.index = 0
        self.result = SessionResult(title, topic, total=len(self.questions))
        self.pending: Pending | None = None
        self.left = False
        self.shown_at: datetime | None = None
        self.reasked: dict[str, int] = {}  # question id -> times brought back after Again (requeue_again)
        # What undo puts back, newest last: (the answer, the running order, index and re-asks before it).
        self._undo: list[tuple[Answered, list[Question], int, dict[str, int]]] = []
        # Choices are shuffled per question and session: a redraw keeps the order, a new session changes it.
        self.seed = clock().isoformat()

    # -- where the session is -----------------------------------------------------------------

    @property
    def current(self) -> Question | None:
        """The question being asked; None once every question is done or the learner left."""
        if self.left or self.index >= len(self.questions):
            return None
        return self.questions[self.index]

    @property
    def position(self) -> tuple[int, int]:
        """(1-based number of the current question, how many the running order holds now)."""
        return self.index + 1, len(self.questions)

    @property
    def answered(self) -> list[Answered]:
        """This session's saved answers, in the order given."""
        return self.result.answered

    def asked_before(self, question: Question) -> bool:
        """Whether `question` was answered earlier this session: it only comes back after Again."""
        return any(a.question.id == question.id for a in self.answered)

    # -- one question -------------------------------------------------------------------------

    def show(self) -> None:
        """The current question is in front of the learner now: its time starts."""
        self.shown_at = self.clock()

    def check(self, response: Any) -> Verdict:
        """Check the learner's response to the current question (a card: None, to reveal it); it is
        then pending until rated. A reply that cannot be checked raises AskAgain, and nothing is pending."""
        q = self._open_question()
        if self.pending is not None:
            raise RuntimeError("this answer is checked already: rate it")
        if (problem := reply_problem(q, response)) is not None:
            raise AskAgain(problem)
        verdict = check_answer(q, response)
        now = self.clock()
        spent = (now - (self.shown_at or now)).total_seconds()
        self.pending = Pending(q, verdict, response, max(0, int(spent * 1000)), default_rating(verdict.correct))
        return verdict

    def tick(self, covered: Iterable[int]) -> int:
        """The key points of the pending card the answer covered (0-based); returns the rating they suggest."""
        pending = self._need_pending()
        ticked = sorted(set(covered))
        pending.response = {"covered": ticked}
        pending.suggested = rating_from_key_points(len(ticked), len(pending.question.key_points))
        return pending.suggested

    def rate(self, rating: int) -> Answered:
        """Save the pending answer with `rating` (1-4); Again brings the question back later in the
        session. A refused save raises one of SAVE_ERRORS and leaves the answer pending."""
        before = (list(self.questions), self.index, dict(self.reasked))
        answered = self._save(rating)
        self._undo.append((answered, *before))
        rest = self.questions[self.index + 1:]
        # Again: the question comes back later in this session, as in Anki (each time a review of its own).
        if requeue_again(rest, answered.question, rating, self.reasked):
            self.questions[self.index + 1:] = rest
            answered.requeued = True
        return answered

    def next(self) -> Question | None:
        """Go on to the next question (a question not answered is skipped); None at the end."""
        if self.pending is not None:
            raise RuntimeError("rate the answer first: it would be lost")
        self.index += 1
        return self.current

    @property
    def can_undo(self) -> bool:
        """Whether `undo` can take back a rating now: one was saved this session and no answer waits."""
        return bool(self._undo) and self.pending is None and not self.left

    def undo(self) -> Answered:
        """Take back the last rating saved in this session: its answer row is deleted and its card put
        back exactly as it was; the question is asked again, where it was in the running order. A
        refused undo raises UndoRefused (or one of SAVE_ERRORS) and changes nothing."""
        if self.left:
            raise RuntimeError("the session has ended")
        if self.pending is not None:
            raise RuntimeError("rate the answer first: it would be lost")
        if not self._undo:
            raise RuntimeError("no rating to undo in this session")
        answered, questions, index, reasked = self._undo[-1]
        self.store.undo_answer(answered.uid)
        self._undo.pop()
        self.result.answered.remove(answered)
        self.questions, self.index, self.reasked = questions, index, reasked
        self.shown_at = None
        return answered

    def drop(self, question_id: str) -> Question | None:
        """Take the current question (and any later copy of it) out of the running order, as when the
        learner suspends it; returns the question now current (None: the session is done)."""
        if self.pending is not None:
            raise RuntimeError("rate the answer first: it would be lost")
        self.questions[self.index:] = [q for q in self.questions[self.index:] if q.id != question_id]
        self.shown_at = None
        return self.current

    def leave(self, rating: int | None = None) -> Answered | None:
        """End the session here. An answer checked but not rated is saved with `rating` (None: the rating
        it suggests), as every front end promises; a refused save raises and the session stays open."""
        answered = None
        if self.pending is not None:
            answered = self._save(self.pending.suggested if rating is None else rating)
        self.left = True
        return answered

    # -- saving -------------------------------------------------------------------------------

    def _save(self, rating: int) -> Answered:
        """The one place a rating is written: the answer row and the FSRS card, in one transaction."""
        pending = self._need_pending()
        pending.at = pending.at or self.clock()
        pending.uid = pending.uid or new_uid()
        due = self.record(self.store, pending.question, rating=rating, correct=pending.verdict.correct,
                          response=pending.response, duration_ms=pending.duration_ms, now=pending.at,
                          uid=pending.uid)
        answered = Answered(pending.question, pending.verdict.correct, rating,
                            again=self.asked_before(pending.question), due=due, uid=pending.uid)
        self.answered.append(answered)
        self.pending = None
        return answered

    def _open_question(self) -> Question:
        if self.current is None:
            raise RuntimeError("no question is open")
        return self.current

    def _need_pending(self) -> Pending:
        if self.pending is None:
            raise RuntimeError("no answer is waiting for its rating")
        return self.pending
