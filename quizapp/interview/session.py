"""One mock interview as it runs: the clock, each answer (saved as a review), the exercise's grade,
and the report card at the end. No torch, no textual: the CLI and the TUI both drive this.

Time comes from an injected clock, so tests move it by hand. The questions share the time before
the exercise's box; whatever the questions leave over goes to the exercise.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from quizapp.bank.answers import check_answer
from quizapp.bank.model import Bank, Question
from quizapp.interview.plan import Plan
from quizapp.interview.report import (
    MISSED,
    PARTIAL,
    RIGHT,
    WRONG,
    ExerciseCheck,
    ExerciseResult,
    QuestionResult,
    ReportCard,
    study_next,
    topic_results,
)
from quizapp.study.keypoints import coverage, rating_from_key_points
from quizapp.study.schedule import default_rating, record_review
from quizapp.study.session import AskAgain, reply_problem
from quizapp.study.store import Store, StoreError

QUESTIONS, EXERCISE, DONE = "questions", "exercise", "done"
# A card without key points is rated by the learner; this is what each rating scores.
RATING_SCORE = {1: 0.0, 2: 0.5, 3: 1.0, 4: 1.0}


class Interview:
    """Drive it with start(), then per question show() / submit() / answer...(), then the exercise, then finish()."""

    def __init__(self, plan: Plan, bank: Bank, store: Store, *, clock: Callable[[], datetime]) -> None:
        self.plan = plan
        self.titles = {slug: topic.title for slug, topic in bank.topics.items()}
        self.store = store
        self.clock = clock
        self.results: list[QuestionResult] = []
        self.phase = QUESTIONS
        self.started_at: datetime | None = None
        self.shown_at: datetime | None = None
        self.submitted_at: datetime | None = None
        self.exercise_started_at: datetime | None = None
        self.exercise_result: ExerciseResult | None = None
        self.save_errors: list[str] = []  # answers that could not be saved; the interview goes on
        self.report: ReportCard | None = None

    # -- the clock --------------------------------------------------------------------------

    def start(self) -> None:
        self.started_at = self.shown_at = self.clock()
        if not self.plan.questions:
            self.end_questions()

    @property
    def deadline(self) -> datetime:
        return self.started_at + timedelta(minutes=self.plan.minutes)

    @property
    def questions_deadline(self) -> datetime:
        return self.deadline - timedelta(minutes=self.plan.exercise_minutes)

    def remaining_s(self) -> float:
        """Seconds left in the current part: the questions' share, then the exercise's box."""
        if self.phase == DONE:
            return 0.0
        end = self.questions_deadline if self.phase == QUESTIONS else self.deadline
        return max(0.0, (end - self.clock()).total_seconds())

    def time_up(self) -> bool:
        return self.phase != DONE and self.remaining_s() <= 0

    # -- questions --------------------------------------------------------------------------

    @property
    def current(self) -> Question | None:
        if self.phase != QUESTIONS or len(self.results) >= len(self.plan.questions):
            return None
        return self.plan.questions[len(self.results)]

    @property
    def position(self) -> tuple[int, int]:
        """(1-based number of the current question, how many there are)."""
        return min(len(self.results) + 1, len(self.plan.questions)), len(self.plan.questions)

    def show(self) -> None:
        """The current question is on screen now: its time starts."""
        self.shown_at = self.clock()
        self.submitted_at = None

    def submit(self) -> bool:
        """The answer is given (a card: before its key points are ticked); False when it came too late."""
        self.submitted_at = self.clock()
        return self.submitted_at <= self.questions_deadline

    def answer(self, response: Any) -> QuestionResult:
        """Settle a checked question (not a card) with the learner's response; a reply that cannot be
        checked raises AskAgain (study.session.reply_problem) and settles nothing."""
        q = self._need_current()
        if (problem := reply_problem(q, response)) is not None:
            raise AskAgain(problem)
        verdict = check_answer(q, response)
        right = verdict.correct is True
        return self._settle(q, RIGHT if right else WRONG, 1.0 if right else 0.0, default_rating(verdict.correct),
                            correct=verdict.correct, response=response)

    def answer_card(self, text: str, covered: list[int] | tuple[int, ...] = (), rating: int | None = None) -> QuestionResult:
        """Settle a card: ticked key points give the rating; a card without key points needs `rating`."""
        q = self._need_current()
        points = len(q.key_points)
        ticked = sorted({i for i in covered if 0 <= i < points})
        if points:
            rating = rating_from_key_points(len(ticked), points)
            score = coverage(len(ticked), points)
        elif rating in RATING_SCORE:
            score = RATING_SCORE[rating]
        else:
            raise ValueError("a card without key points needs the learner's rating (1-4)")
        outcome = RIGHT if rating >= 3 else PARTIAL if rating == 2 else WRONG
        return self._settle(q, outcome, score, rating, correct=None, response={"text": text, "covered": ticked},
                            covered=len(ticked), points=points)

    def _need_current(self) -> Question:
        if self.current is None:
            raise RuntimeError("no question is open")
        return self.current

    def _settle(self, q: Question, outcome: str, score: float, rating: int, *, correct: bool | None,
                response: Any, covered: int = 0, points: int = 0) -> QuestionResult:
        now = self.clock()
        answered = self.submitted_at or now
        seconds = max(0.0, (answered - self.shown_at).total_seconds())
        saved = self._save(q, rating=rating, correct=correct, response=response, duration_ms=int(seconds * 1000))
        result = QuestionResult(q.id, q.topic, q.type, q.prompt, outcome, score, seconds,
                                rating if saved else None, covered, points)
        self.results.append(result)
        self.shown_at, self.submitted_at = now, None
        if self.current is None:
            self.end_questions()
        return result

    def _save(self, q: Question, **review) -> bool:
        """Every answer is a review: the answer row and the FSRS card, at once, as `quizapp review` does."""
        try:
            record_review(self.store, q, now=self.clock(), **review)
        except StoreError as exc:
            self.save_errors.append(f"{q.id}: {exc}")
            return False
        return True

    def end_questions(self) -> None:
        """Time is up for the questions (or they are done): what is left counts as missed."""
        if self.phase != QUESTIONS:
            return
        for q in self.plan.questions[len(self.results):]:
            self.results.append(QuestionResult(q.id, q.topic, q.type, q.prompt, MISSED, 0.0, None))
        self.phase = EXERCISE if self.plan.exercise else DONE
        if self.phase == EXERCISE:
            self.exercise_started_at = self.clock()

    # -- the exercise -----------------------------------------------------------------------

    def exercise_graded(self, report: dict | None, failure: str | None = None) -> ExerciseResult:
        """Take the grader's report (schema 1), or why there is none; the exercise part is then over."""
        ex = self.plan.exercise
        if ex is None:
            raise RuntimeError("this interview has no exercise")
        checks: tuple[ExerciseCheck, ...] = ()
        if isinstance(report, dict):
            status, message = str(report.get("status") or "error"), report.get("message")
            checks = tuple(ExerciseCheck(str(c.get("title") or c.get("id") or "?"), str(c.get("status") or "error"),
                                         str(c.get("message") or ""))
                           for c in report.get("checks") or () if isinstance(c, dict))
        else:
            status, message = "error", failure or "the grader gave no report"
        began = self.exercise_started_at or self.clock()
        self.exercise_result = ExerciseResult(ex.id, ex.title, ex.topic, status, message, checks,
                                              max(0.0, (self.clock() - began).total_seconds()))
        self.phase = DONE
        return self.exercise_result

    # -- the end ----------------------------------------------------------------------------

    def finish(self, *, ended_early: bool = False) -> ReportCard:
        """Close the interview, build its report card and keep it in the store (once)."""
        if self.report is not None:
            return self.report
        self.end_questions()
        ex = self.plan.exercise
        if ex is not None and self.exercise_result is None:
            self.exercise_result = ExerciseResult(ex.id, ex.title, ex.topic, "not graded",
                                                  "the interview ended before the exercise was graded", (), 0.0)
        self.phase = DONE
        finished = self.clock()
        question_score = (sum(r.score for r in self.results) / len(self.results)) if self.results else 0.0
        score = question_score
        if self.exercise_result is not None:
            share = self.plan.exercise_minutes / self.plan.minutes if self.results else 1.0
            score = (1 - share) * question_score + share * self.exercise_result.score
        topics = topic_results(self.results, self.exercise_result, self.titles)
        self.report = ReportCard(
            started_at=self.started_at or finished, finished_at=finished, minutes=self.plan.minutes, score=score,
            question_score=question_score, questions=list(self.results), topics=topics,
            exercise=self.exercise_result, study_next=study_next(topics, self.plan.weights),
            titles=self.titles, ended_early=ended_early,
        )
        try:
            self.store.record_interview(started_at=self.report.started_at, finished_at=finished,
                                        minutes=self.plan.minutes, score=score, report=self.report.to_dict())
        except StoreError as exc:
            self.save_errors.append(f"the interview itself: {exc}")
        return self.report
