"""Shown orders: shuffled so position teaches nothing, stable within a session, answers in file order."""

from __future__ import annotations

from collections import Counter

from test_bank_validation import GOOD

from quizapp.bank import load_file
from quizapp.bank.shuffle import choice_order, item_order, why_not_lines


def demo(write_pack):
    text = GOOD.replace("    answer: 2\n", "    answer: 2\n    why_not:\n      0: a is wrong.\n      1: b is wrong.\n", 1)
    topic, errors = load_file(write_pack(text))
    assert errors == []
    return topic.questions


def test_choice_order_is_a_stable_permutation_per_seed(write_pack):
    single = demo(write_pack)[0]
    orders = {tuple(choice_order(single, f"session-{n}")) for n in range(40)}
    assert all(sorted(o) == [0, 1, 2] for o in orders)
    assert len(orders) == 6  # every arrangement of three choices turns up
    assert choice_order(single, "s") == choice_order(single, "s")


def test_the_right_choice_lands_on_every_row_about_equally(write_pack):
    single = demo(write_pack)[0]
    rows = Counter(choice_order(single, str(n)).index(single.answer) for n in range(3000))
    assert all(800 < rows[r] < 1200 for r in range(3)), rows


def test_item_order_is_never_the_answer(write_pack):
    order_q = demo(write_pack)[4]
    for n in range(50):
        shown = item_order(order_q, str(n))
        assert sorted(shown) == list(range(5)) and shown != list(range(5))


def test_why_not_lines_put_the_pick_first(write_pack):
    single = demo(write_pack)[0]
    assert why_not_lines(single, 1) == ([("b", "b is wrong.")], [("a", "a is wrong.")])
    assert why_not_lines(single, 2) == ([], [("a", "a is wrong."), ("b", "b is wrong.")])
    assert why_not_lines(single, None) == ([], [("a", "a is wrong."), ("b", "b is wrong.")])
