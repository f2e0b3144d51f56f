"""The terminal interview says that time is up when it is, not after the learner's next Enter."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from quizapp.cli import cli
from quizapp.commands import interview as interview_cmd
from quizapp.study.store import Store

PACK = """
topic: demo
title: Demo topic
questions:
  - id: demo-text
    type: text
    difficulty: 1
    prompt: Which format needs loss scaling?
    answer: [float16, fp16]
    explanation: float16.
  - id: demo-single
    type: single
    difficulty: 1
    prompt: Which format has 8 exponent bits?
    choices: [bfloat16, float16]
    answer: 0
    explanation: bfloat16.
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="SIGALRM is POSIX's")
def test_a_prompt_at_a_terminal_is_interrupted_when_time_is_up(monkeypatch):
    monkeypatch.setattr(interview_cmd, "stdin_is_terminal", lambda: True)
    with pytest.raises(interview_cmd.TimeUp):
        with interview_cmd.time_up_after(0.2):
            time.sleep(30)  # a learner still thinking; without the alarm the test would run on


def test_without_a_terminal_nothing_is_interrupted(monkeypatch):
    monkeypatch.setattr(interview_cmd, "stdin_is_terminal", lambda: False)
    with interview_cmd.time_up_after(0.05):
        time.sleep(0.2)  # piped input: the late answer is refused by the interview instead


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="SIGALRM is POSIX's")
def test_the_interview_moves_on_at_time_up_and_counts_the_rest_missed(write_pack, quizapp_home, monkeypatch):
    write_pack(PACK, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr(interview_cmd, "stdin_is_terminal", lambda: True)
    real = interview_cmd.time_up_after
    monkeypatch.setattr(interview_cmd, "time_up_after", lambda seconds: real(0.3))  # the questions' time, shortened
    asked = []

    def thinking(text, default=None, **_):
        asked.append(text)
        if len(asked) == 1:
            return default or ""  # "Press Enter to start the clock"
        time.sleep(30)  # still thinking when the time runs out
        return "float16"

    monkeypatch.setattr(interview_cmd, "ask", thinking)
    monkeypatch.setattr("quizapp.commands.review.ask", thinking)
    result = CliRunner().invoke(cli, ["interview", "--topic", "demo", "--minutes", "3"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Time is up for the questions" in result.output
    assert len(asked) == 2  # the first question's prompt was cut short; the second was never asked
    assert "Report card" in result.output and "Score 0%" in result.output, result.output
    with Store.open() as store:
        assert store.answers() == []  # a question cut short is missed, not answered
