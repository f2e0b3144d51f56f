"""A shipped topic file's keys, for fact tests that hold the file against what torch shows."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from quizapp.bank import load_bank, pack_files
from quizapp.bank.answers import check_answer
from quizapp.bank.model import Question

QUESTIONS_DIR = Path(__file__).resolve().parents[2] / "questions"


@cache
def topic_questions(topic: str) -> dict[str, Question]:
    """The questions of questions/<topic>.yaml by id."""
    return load_bank(pack_files([QUESTIONS_DIR / f"{topic}.yaml"])).questions


def right_choices(topic: str, qid: str) -> set[int]:
    """The keyed right choices of a single or multi question, as a set of indices."""
    answer = topic_questions(topic)[qid].answer
    return {answer} if isinstance(answer, int) else set(answer)


def accepts(topic: str, qid: str, answer) -> bool:
    """Whether the file's key (and tolerance) take this answer as a learner would type it."""
    return bool(check_answer(topic_questions(topic)[qid], answer).correct)
