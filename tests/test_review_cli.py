"""`quizapp review`: a study session in the terminal, every answer saved as it is rated."""

from __future__ import annotations

import random
from datetime import datetime, timezone

from click.testing import CliRunner
from test_bank_validation import GOOD

from quizapp.cli import cli
from quizapp.commands import review as review_module
from quizapp.study.store import Store


def review(stdin: str, *args: str):
    random.seed(0)  # order questions are shown shuffled
    return CliRunner().invoke(cli, ["review", "--topic", "demo", *args], input=stdin, catch_exceptions=False)


def stored() -> dict[str, tuple]:
    with Store.open() as store:
        return {r["question_id"]: (r["correct"], r["rating"]) for r in store.answers()}


def test_a_session_over_every_type(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    # Order of the queue: difficulty 1 (single, text), 2 (multi, numeric), 3 (order, card).
    monkeypatch.setattr(random, "shuffle", lambda items: items.reverse())  # order items shown E D C B A
    monkeypatch.setattr("quizapp.commands.review.choice_order",
                        lambda q, seed: list(range(len(q.choices)))[::-1])  # choices shown c, b, a
    answers = [
        "1", "",            # single: c, right; Enter keeps the suggested rating (Good)
        "BF16", "4",        # text: right whatever the case; rated Easy
        "1 2", "",          # multi: c and b, wrong (the answer is a and c); suggested Again
        "65,504", "",       # numeric: right with a thousands separator
        "EDCBA", "",        # order: the reversed display read back in the right order
        "", "2",            # card: reveal, then rate Hard
        "1 3", "",          # multi again (rated Again above, so it comes back): right this time, Good
    ]
    result = review("\n".join(answers) + "\n", "--limit", "6")
    assert result.exit_code == 0, result.output
    assert stored() == {
        "demo-single": (1, 3), "demo-text": (1, 4), "demo-multi": (1, 3),  # its latest answer
        "demo-numeric": (1, 3), "demo-order": (1, 3), "demo-card": (None, 2),
    }
    with Store.open() as store:
        assert [(r["correct"], r["rating"]) for r in store.answers() if r["question_id"] == "demo-multi"] == [(0, 1), (1, 3)]
    # the score counts first tries; the re-ask is told apart
    assert "Answered 6 of 6; 4 of 5 checked answers right (80%); 1 re-ask after Again." in result.output
    assert "The answer: a; c" in result.output
    with Store.open() as store:
        responses = [(r["question_id"], r["response"]) for r in store.answers()]
    assert ("demo-single", "2") in responses  # file order
    assert [r for qid, r in responses if qid == "demo-multi"] == ["[1, 2]", "[0, 2]"]


def test_bad_input_is_asked_again_and_q_stops_with_answers_kept(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    result = review("seven\n9\n3\n\nq\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Type a number from 1 to 3.") == 2
    assert stored() == {"demo-single": (1, 3)}
    assert "Answered 1 of 6" in result.output


def test_end_of_input_ends_the_session(write_pack, quizapp_home):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    result = review("")
    assert result.exit_code == 0 and "Answered 0 of 6" in result.output


def test_nothing_to_study(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    monkeypatch.setattr(random, "shuffle", lambda items: items.reverse())
    # choices in file order, so every answer below is right and nothing is re-asked after Again
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    first = review("3\n\nbf16\n\n1 3\n\n65504\n\nEDCBA\n\n\n\n", "--limit", "6")
    assert "Answered 6 of 6" in first.output
    result = review("")  # every card is now scheduled in the future, and none is new
    assert "Nothing is due" in result.output


def test_unknown_topic_is_a_usage_error():
    result = CliRunner().invoke(cli, ["review", "--topic", "nope"])
    assert result.exit_code == 2 and "no topic 'nope'" in result.output


def test_choices_are_shuffled_per_session_and_stored_in_file_order(write_pack, quizapp_home, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    seen = []
    real = review_module.choice_order

    def spy(q, seed):
        order = real(q, seed)
        seen.append((seed, order))
        return order

    monkeypatch.setattr(review_module, "choice_order", spy)
    monkeypatch.setattr(review_module, "utcnow", lambda: datetime(2026, 11, 23, 9, 30, tzinfo=timezone.utc))
    result = review("q\n", "--limit", "1")
    assert result.exit_code == 0, result.output
    seed, order = seen[0]
    shown = [line.split(". ", 1)[1] for line in result.output.splitlines() if line.startswith("  ") and ". " in line]
    assert shown == [["a", "b", "c"][i] for i in order]
    # picking the row that shows "c" stores c's file index, whatever row it is on
    result = review(f"{order.index(2) + 1}\n\nq\n", "--limit", "1")
    with Store.open() as store:
        assert [(r["response"], r["correct"]) for r in store.answers()] == [("2", 1)]
