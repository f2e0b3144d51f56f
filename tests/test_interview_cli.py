"""`quizapp interview` in the terminal, and key points in `quizapp review`, on a fake clock."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.catalog import Exercise
from quizapp.cli import cli
from quizapp.grading.result import CheckResult, GradeReport
from quizapp.interview import make_plan
from quizapp.study.store import Store

PACK = """
topic: demo
title: Demo topic
questions:
  - id: demo-card
    type: card
    difficulty: 1
    prompt: Why does a GradScaler skip steps?
    explanation: The model answer.
    key_points: [inf or NaN in the gradients, the step is skipped, the scale backs off, later it grows again]
  - id: demo-single
    type: single
    difficulty: 1
    prompt: Which format needs loss scaling?
    choices: [bfloat16, float16]
    answer: 1
    explanation: float16.
"""


class SteppingClock:
    """Moves on by `step` at every reading: each prompt and each check of the time costs time."""

    def __init__(self, step: timedelta) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


@pytest.fixture
def demo(write_pack, quizapp_home, monkeypatch):
    write_pack(PACK, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr("quizapp.commands.interview.clock", SteppingClock(timedelta(seconds=5)))
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))

    def card_first(*args, **kwargs):  # the plan's order is random; the tests type for this one
        plan = make_plan(*args, **kwargs)
        return dataclasses.replace(plan, questions=tuple(sorted(plan.questions, key=lambda q: q.id)))

    monkeypatch.setattr("quizapp.commands.interview.make_plan", card_first)


def interview(stdin: str, *args: str):
    return CliRunner().invoke(cli, ["interview", "--topic", "demo", *args], input=stdin, catch_exceptions=False)


def stored_answers() -> dict:
    with Store.open() as store:
        return {r["question_id"]: (r["correct"], r["rating"]) for r in store.answers()}


def test_a_short_interview_end_to_end(demo):
    # Enter starts the clock; the card's written answer and 3 of 4 key points (Good); the single, right.
    result = interview("\n".join(["", "loss scaling skips bad steps", "1 2 3", "2"]) + "\n", "--minutes", "4")
    assert result.exit_code == 0, result.output
    assert re.search(r"⏱ \d:\d\d left\n", result.output)  # the countdown at each question (no exercise here)
    assert "Key points" in result.output and "right (3/4 points)" in result.output
    assert "Report card" in result.output and "Score 88%" in result.output  # (3/4 + 1) / 2
    assert "Study next: Demo topic" in result.output
    assert stored_answers() == {"demo-card": (None, 3), "demo-single": (1, 3)}
    with Store.open() as store:
        (kept,) = store.interviews()
    assert kept.score == 0.875 and kept.report["topics"]["demo"]["answered"] == 2


def test_time_up_counts_the_rest_as_missed(demo, monkeypatch):
    monkeypatch.setattr("quizapp.commands.interview.clock", SteppingClock(timedelta(minutes=1)))
    result = interview("\n" + "\n".join(["2", "my answer", "1"]) + "\n", "--minutes", "3")
    assert result.exit_code == 0, result.output
    assert "Time was up before that answer" in result.output
    assert "missed" in result.output and "Score 0%" in result.output
    assert stored_answers() == {}
    with Store.open() as store:
        assert store.interviews()[0].report["questions"][0]["outcome"] == "missed"


def test_q_ends_early_and_keeps_the_report(demo):
    result = interview("\nq\n", "--minutes", "3")
    assert result.exit_code == 0, result.output
    assert "Interview ended" in result.output and "(ended early)" in result.output


def test_bad_options_are_usage_errors(demo):
    result = CliRunner().invoke(cli, ["interview", "--topic", "nope"])
    assert result.exit_code == 2 and "no topic 'nope'" in result.output
    result = CliRunner().invoke(cli, ["interview", "--minutes", "1"])
    assert result.exit_code == 2 and "3 to 180 minutes" in result.output


@pytest.fixture
def demo_exercise(demo, tmp_path, monkeypatch) -> list[tuple[str, str]]:
    """One exercise in the demo topic; its grades are faked. Returns (graded file, its text) per grade."""
    folder = tmp_path / "ex"
    folder.mkdir()
    (folder / "starter.py").write_text("# quizapp: exercise=demo_ex\n")
    exercise = Exercise("demo_ex", "Demo exercise", "demo", 1, "Write `f`.", (), folder)
    monkeypatch.setattr("quizapp.commands.interview.load_exercises", lambda: {"demo_ex": exercise})
    graded = []

    def fake_grade(path, ex, store, console):
        graded.append((path.relative_to(Path.cwd()).as_posix(), path.read_text()))
        return GradeReport("demo_ex", str(path), "fail", None, "cpu", "x", 1.0, [
            CheckResult("a", "Runs", "pass"), CheckResult("b", "Scales", "fail", "expected 2, saw 1")])

    monkeypatch.setattr("quizapp.commands.interview.grade_file", fake_grade)
    work = tmp_path / "work"
    work.mkdir()
    (work / "interview_demo_ex.py").write_text("mine")
    monkeypatch.chdir(work)
    return graded


QUESTIONS_DONE = ["", "answer", "1 2 3", "2"]  # start, the card and its ticks, the single


def test_the_exercise_is_written_where_you_say_and_graded(demo_exercise, tmp_path):
    work = tmp_path / "work"
    # Enter takes the offered name: a free one, since interview_demo_ex.py is taken.
    result = interview("\n".join([*QUESTIONS_DONE, "", ""]) + "\n", "--minutes", "5")
    assert result.exit_code == 0, result.output
    assert "Where should the starter file go? [interview_demo_ex-2.py]" in result.output
    assert "Wrote your starter file: interview_demo_ex-2.py" in result.output
    assert "left for the questions, then" in result.output and "left for the exercise" in result.output
    assert (work / "interview_demo_ex.py").read_text() == "mine"
    assert demo_exercise == [("interview_demo_ex-2.py", "# quizapp: exercise=demo_ex\n")]
    assert "Exercise Demo exercise  fail  1/2 checks" in result.output
    assert "Scales: expected 2, saw 1" in result.output


def test_the_starter_never_replaces_a_file_without_asking(demo_exercise, tmp_path):
    work = tmp_path / "work"
    # The learner names their own file: asked, they keep it and choose another path instead.
    answers = [*QUESTIONS_DONE, "interview_demo_ex.py", "n", "sol/mine.py", ""]
    result = interview("\n".join(answers) + "\n", "--minutes", "5")
    assert result.exit_code == 0, result.output
    assert "interview_demo_ex.py exists. Replace it with the starter?" in result.output
    assert (work / "interview_demo_ex.py").read_text() == "mine"
    assert "Wrote your starter file: sol/mine.py" in result.output
    assert demo_exercise == [("sol/mine.py", "# quizapp: exercise=demo_ex\n")]


def test_the_starter_replaces_a_file_when_you_say_so(demo_exercise, tmp_path):
    answers = [*QUESTIONS_DONE, "interview_demo_ex.py", "y", ""]
    result = interview("\n".join(answers) + "\n", "--minutes", "5")
    assert result.exit_code == 0, result.output
    assert demo_exercise == [("interview_demo_ex.py", "# quizapp: exercise=demo_ex\n")]


def test_the_intro_says_whether_an_exercise_ends_the_interview(demo_exercise):
    # 3 minutes: the exercise's topic is asked, but too short for one; the intro says so and why.
    result = interview("\nq\n", "--minutes", "3")
    assert result.exit_code == 0, result.output
    assert ("no coding exercise (from 5 minutes on, the interview ends with a coding exercise)"
            in " ".join(result.output.split()))
    assert "Exercise" not in result.output
    result = interview("\nq\n", "--minutes", "5")
    assert "then the exercise 'Demo exercise' with a 2-minute box" in " ".join(result.output.split())


def test_your_written_answer_is_shown_beside_the_key_points(demo):
    result = interview("\n".join(["", "loss scaling skips bad steps", "1 2 3", "2"]) + "\n", "--minutes", "4")
    assert result.exit_code == 0, result.output
    model, mine, points = (result.output.index(text) for text in
                           ("The model answer.", "Your answer: loss scaling skips bad steps", "Key points"))
    assert model < mine < points


def test_review_lists_key_points_and_ticks_suggest_the_rating(demo):
    # The card comes first (same difficulty, bank order): reveal, tick 1 of 4 points: Again is suggested.
    stdin = "\n".join(["", "1", "", "2", ""]) + "\n"
    result = CliRunner().invoke(cli, ["review", "--topic", "demo"], input=stdin, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "4. later it grows again" in result.output
    assert "Rating [1]" in result.output
    assert stored_answers() == {"demo-single": (1, 3), "demo-card": (None, 1)}
