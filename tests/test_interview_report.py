"""The report card shows a topic's score in its parts: the questions, the exercise's checks, then the
two combined, so an exercise cannot hide how the questions went."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from rich.console import Console

from quizapp.interview.render import print_report_card, topic_table
from quizapp.interview.report import (
    PARTIAL,
    RIGHT,
    WRONG,
    ExerciseCheck,
    ExerciseResult,
    QuestionResult,
    ReportCard,
    topic_results,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
TITLES = {"amp": "Mixed precision", "lora": "LoRA"}


def question(qid: str, topic: str, outcome: str, score: float) -> QuestionResult:
    return QuestionResult(qid, topic, "single", "Why?", outcome, score, 30.0)


def exercise(passed: int, failed: int) -> ExerciseResult:
    checks = tuple(ExerciseCheck(f"check {n}", "pass") for n in range(passed))
    checks += tuple(ExerciseCheck(f"check {passed + n}", "fail", "expected 2, saw 1") for n in range(failed))
    return ExerciseResult("amp_training", "AMP training loop", "amp", "fail" if failed else "pass", None, checks, 300.0)


def card(questions, ex) -> ReportCard:
    topics = topic_results(questions, ex, TITLES)
    return ReportCard(started_at=NOW, finished_at=NOW, minutes=30, score=0.5, question_score=0.5,
                      questions=questions, topics=topics, exercise=ex, study_next=[], titles=TITLES)


def text_of(renderable, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_topic_keeps_its_questions_score_and_its_exercise_apart_from_the_combined():
    """The report of the issue: the questions of a topic scored 40%, its exercise passed every check;
    the combined score alone (70%) said nothing of the 40%."""
    questions = [question("a1", "amp", PARTIAL, 0.4), question("l1", "lora", RIGHT, 1.0)]
    report = card(questions, exercise(passed=5, failed=0))
    amp, lora = report.topics
    assert amp.question_score == 0.4 and amp.exercise_score == 1.0 and amp.score == 0.7
    assert lora.question_score == 1.0 and lora.exercise is None and lora.exercise_score is None
    stored = amp.to_dict()
    assert (stored["question_score"], stored["exercise_score"], stored["score"]) == (0.4, 1.0, 0.7)
    assert lora.to_dict()["exercise_score"] is None
    table = text_of(topic_table(report))
    assert "questions" in table and "exercise" in table and "combined" in table
    amp_row = next(line for line in table.splitlines() if "Mixed precision" in line)
    assert [cell.strip() for cell in amp_row.strip("│ \n").split("│")] == [
        "Mixed precision", "40%", "0", "1/1", "5/5 checks 100%", "70%"]
    lora_row = next(line for line in table.splitlines() if "LoRA" in line)
    assert [cell.strip() for cell in lora_row.strip("│ \n").split("│")] == ["LoRA", "100%", "1", "1/1", "-", "100%"]


def test_an_exercise_on_a_topic_no_question_asked_shows_as_the_exercise_only():
    report = card([question("l1", "lora", WRONG, 0.0)], exercise(passed=1, failed=3))
    amp = next(t for t in report.topics if t.slug == "amp")
    assert amp.question_score is None and amp.exercise_score == 0.25 and amp.score == 0.25
    row = next(line for line in text_of(topic_table(report)).splitlines() if "Mixed precision" in line)
    assert [cell.strip() for cell in row.strip("│ \n").split("│")] == [
        "Mixed precision", "-", "-", "exercise only", "1/4 checks 25%", "25%"]


def test_without_an_exercise_the_table_has_no_exercise_column_and_one_score():
    report = card([question("a1", "amp", RIGHT, 1.0), question("a2", "amp", WRONG, 0.0)], None)
    table = text_of(topic_table(report))
    assert "exercise" not in table and "combined" not in table
    assert report.topics[0].question_score == 0.5 == report.topics[0].score


def test_the_cli_report_card_prints_the_parts():
    report = card([question("a1", "amp", PARTIAL, 0.4)], exercise(passed=5, failed=0))
    console = Console(width=100, record=True, color_system=None, file=io.StringIO())
    print_report_card(report, console)
    text = console.export_text()
    assert "5/5 checks 100%" in text and "40%" in text and "70%" in text
    assert "combined: the questions with the exercise, which weighs as much as one question" in text
