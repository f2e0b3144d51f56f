"""The one table of question types: every type the bank accepts has its words, and nothing else does."""

from __future__ import annotations

from quizapp.bank.kinds import QUESTION_KINDS, kind_of
from quizapp.bank.model import QUESTION_TYPES


def test_every_question_type_has_one_entry():
    assert sorted(QUESTION_KINDS) == sorted(QUESTION_TYPES)
    for name, kind in QUESTION_KINDS.items():
        assert kind.label and kind.short and kind.ask and kind.empty, name
        assert kind.hint or name == "card", name  # a card's answer widget says how to answer


def test_a_type_the_table_lacks_goes_by_its_own_name():
    kind = kind_of("essay")
    assert (kind.label, kind.short) == ("essay", "essay")
