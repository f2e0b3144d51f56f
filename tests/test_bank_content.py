"""The shipped bank: its size and mix cannot quietly shrink, and every `verified` question is
linked to a test in tests/facts/ that checks its fact by running torch."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from quizapp.bank import QUESTION_TYPES, load_bank, pack_files
from quizapp.paths import shipped_questions_dir

FACTS = Path(__file__).parent / "facts"


@pytest.fixture(scope="module")
def bank():
    loaded = load_bank(pack_files([shipped_questions_dir()]))
    assert not loaded.errors, "\n".join(map(str, loaded.errors))
    return loaded


def test_size_and_coverage(bank):
    questions = list(bank.questions.values())
    assert len(questions) >= 180
    assert len(bank.topics) >= 14
    per_topic = Counter(q.topic for q in questions)
    assert min(per_topic.values()) >= 8, per_topic
    types = Counter(q.type for q in questions)
    assert set(types) == set(QUESTION_TYPES)
    assert types["card"] / len(questions) >= 0.30, types
    assert types["numeric"] + types["order"] >= 20, types


def test_difficulty_spread(bank):
    levels = Counter(q.difficulty for q in bank.questions.values())
    for level in (1, 2, 3):
        assert levels[level] / len(bank.questions) >= 0.25, levels


def verifies_markers() -> dict[str, list[str]]:
    """question id -> the fact tests that name it in @pytest.mark.verifies(...)."""
    found: dict[str, list[str]] = {}
    for path in sorted(FACTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "verifies":
                for arg in node.args:
                    assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), f"{path}:{node.lineno}"
                    found.setdefault(arg.value, []).append(f"{path.name}:{node.lineno}")
    return found


def test_every_verified_question_has_a_fact_test(bank):
    markers = verifies_markers()
    verified = {q.id for q in bank.questions.values() if "verified" in q.tags}
    assert len(verified) >= 60
    assert sorted(verified - set(markers)) == [], "verified questions without a fact test"
    assert sorted(set(markers) - verified) == [], "fact tests naming a question that is not tagged verified"
