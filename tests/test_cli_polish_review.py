"""`quizapp review`: quitting at the rating keeps the answer just checked, a reply that is not a
number is asked again, and a question rated Again comes back later in the same session."""

from __future__ import annotations

from types import SimpleNamespace

from click.testing import CliRunner

from quizapp.bank.answers import check_answer, numeric_problem
from quizapp.cli import cli
from quizapp.study.queue import MAX_REASKS, requeue_again
from quizapp.study.store import Store

# Queue order: difficulty first, so the single, then the numeric, then the card.
SMALL = """
topic: demo
title: Demo topic
questions:
  - id: demo-single
    type: single
    difficulty: 1
    prompt: Pick one.
    choices: [a, b, c]
    answer: 2
    explanation: c is right.
  - id: demo-numeric
    type: numeric
    difficulty: 2
    prompt: float16 max?
    answer: 65504
    tolerance: 0.001
    explanation: The max is 65504.
  - id: demo-card
    type: card
    difficulty: 3
    prompt: Explain loss scaling.
    explanation: The model answer.
"""


def review(stdin: str, *args: str):
    return CliRunner().invoke(cli, ["review", "--topic", "demo", *args], input=stdin, catch_exceptions=False)


def reviews() -> list[tuple]:
    with Store.open() as store:
        return [(r["question_id"], r["correct"], r["rating"]) for r in store.answers()]


def pack(write_pack, quizapp_home, monkeypatch):
    write_pack(SMALL, "demo.yaml", quizapp_home / "questions")
    # choices in file order: "3" picks c (right), "1" picks a (wrong)
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))


# -- 1. q at the rating prompt ---------------------------------------------------------------

def test_q_at_the_rating_saves_the_checked_answer_with_the_suggested_rating(write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("3\nq\n")
    assert result.exit_code == 0, result.output
    assert reviews() == [("demo-single", 1, 3)]
    assert "Saved as Good (suggested); stopping." in result.output
    assert "Answered 1 of 3; 1 of 1 checked answers right (100%)." in result.output


def test_end_of_input_at_the_rating_saves_a_wrong_answer_as_again(write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("1\n")  # wrong, then Ctrl+D at the rating
    assert reviews() == [("demo-single", 0, 1)]
    assert "Saved as Again (suggested); stopping." in result.output
    assert "Answered 1 of 3" in result.output


def test_q_before_the_answer_is_checked_saves_nothing(write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("q\n")
    assert reviews() == [] and "Saved as" not in result.output and "Answered 0 of 3" in result.output


def test_a_revealed_card_is_saved_as_good_when_the_learner_quits(write_pack, quizapp_home, monkeypatch):
    """As the app does on leaving: a card already revealed keeps the suggested rating (Good)."""
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("3\n\n65504\n\n\nq\n")  # single, numeric, then reveal the card and quit at its rating
    assert [r[0] for r in reviews()] == ["demo-single", "demo-numeric", "demo-card"]
    assert reviews()[-1][2] == 3
    assert "Saved as Good (suggested); stopping." in result.output
    assert "Answered 3 of 3" in result.output


# -- 2. a numeric reply that is not a number ---------------------------------------------------

def test_a_numeric_reply_that_is_not_a_number_is_asked_again(write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("3\n\n1 GiB\nabc\n65,504\n\nq\n")
    assert result.exit_code == 0, result.output
    assert reviews() == [("demo-single", 1, 3), ("demo-numeric", 1, 3)]  # one answer, right, not Again
    text = " ".join(result.output.split())  # rich wraps long lines
    assert text.count("That is not a number: type digits like 65504 or 6.5e4") == 2
    assert "type the number alone, without 'GiB'" in text


def test_numeric_problem_uses_the_checkers_rule():
    q = SimpleNamespace(type="numeric", answer=65504.0, tolerance=0.0)
    for readable in ["65504", "65,504", "6.5504e4", " 65504 ", "2^-14", "2**-14", "1/3", "25%", "-3"]:
        assert numeric_problem(readable) is None, readable
    assert check_answer(q, "65,504").correct is True
    for unreadable in ["abc", "1 GiB", "inf", "nan", "", "1/0", "6.5e4 bytes", "65.504.1"]:
        problem = numeric_problem(unreadable)
        assert problem and problem.startswith("That is not a number: type digits like 65504 or 6.5e4"), unreadable
        assert check_answer(q, unreadable).correct is False  # what would have been counted wrong unread
    assert "without 'bytes'" in numeric_problem("6.5e4 bytes")
    assert "without" not in numeric_problem("abc")


# -- 3. Again comes back in the same session ---------------------------------------------------

def qs(*ids):
    return [SimpleNamespace(id=i) for i in ids]


def test_requeue_again_puts_the_question_back_after_a_few_others():
    a, b, c, d, e = qs("a", "b", "c", "d", "e")
    pending, reasked = [b, c, d, e], {}
    assert requeue_again(pending, a, 1, reasked, gap=3)
    assert [q.id for q in pending] == ["b", "c", "d", "a", "e"] and reasked == {"a": 1}


def test_requeue_again_goes_to_the_end_when_few_are_left_and_now_when_none_are():
    a, b = qs("a", "b")
    pending = [b]
    assert requeue_again(pending, a, 1, {}, gap=3) and [q.id for q in pending] == ["b", "a"]
    pending = []
    assert requeue_again(pending, a, 1, {}, gap=3) and [q.id for q in pending] == ["a"]


def test_requeue_again_only_after_again_and_at_most_a_few_times():
    (a,) = qs("a")
    for rating in (2, 3, 4):
        pending = []
        assert not requeue_again(pending, a, rating, {}) and pending == []
    reasked: dict[str, int] = {}
    times = 0
    while requeue_again([], a, 1, reasked):
        times += 1
    assert times == MAX_REASKS == 3 and reasked == {"a": 3}


def test_a_question_rated_again_is_asked_again_in_the_session_until_rated_hard_or_better(
        write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    # single wrong (Again), numeric, card (Good), then the single again: right, Good
    result = review("1\n\n65504\n\n\n3\n3\n\n")
    assert result.exit_code == 0, result.output
    assert reviews() == [("demo-single", 0, 1), ("demo-numeric", 1, 3), ("demo-card", None, 3),
                         ("demo-single", 1, 3)]  # each time asked is a review of its own
    assert "4/4 · Demo topic · single · difficulty 1 · again" in result.output
    assert "Answered 3 of 3; 1 of 2 checked answers right (50%); 1 re-ask after Again." in result.output


def test_again_comes_back_at_most_three_times(write_pack, quizapp_home, monkeypatch):
    pack(write_pack, quizapp_home, monkeypatch)
    result = review("1\n\n65504\n\n\n3\n" + "1\n\n" * 3, "--limit", "3")
    assert result.exit_code == 0, result.output
    singles = [r for r in reviews() if r[0] == "demo-single"]
    assert singles == [("demo-single", 0, 1)] * 4  # the first answer and 3 re-asks, then it waits for FSRS
    assert "3 re-asks after Again." in result.output



# -- 4. choices at 80 columns: inline code drawn as code, wrapped lines under their text ------

CODE_CHOICES = """
topic: demo
title: Demo topic
questions:
  - id: demo-code-choices
    type: single
    difficulty: 1
    prompt: What does the second `unscale_` do?
    choices:
      - "A RuntimeError at the second `unscale_`: it is allowed once per optimizer between two `update()` calls"
      - "It reads `grads[i]` and [bold]nothing[/] else"
    answer: 0
    explanation: The guard.
"""


def test_choices_show_inline_code_without_backticks_and_wrap_under_their_text(write_pack, quizapp_home, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    write_pack(CODE_CHOICES, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    result = review("2\nq\n")
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.output.splitlines()]
    first = lines.index("  1. A RuntimeError at the second unscale_: it is allowed once per optimizer")
    assert lines[first + 1] == "     between two update() calls"  # under the text, not at column 0
    assert "  2. It reads grads[i] and [bold]nothing[/] else" in lines  # brackets are text, not markup
    assert "`" not in result.output.split("What does")[1].split("Your answer")[0]
    # the right answer after a wrong pick is shown the same way
    assert "The answer: A RuntimeError at the second unscale_: it is allowed once per" in " ".join(lines)
