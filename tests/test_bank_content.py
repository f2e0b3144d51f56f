"""The shipped bank: its size and mix cannot quietly shrink, and every `verified` question is
linked to a test in tests/facts/ that checks its fact by running torch."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest
from bankshape import (
    cards_without_key_points,
    longest_share,
    missing_why_not,
    multi_right_counts,
    position_shares,
    shortest_share,
)

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
    assert len(questions) >= 320
    assert len(bank.topics) >= 22
    per_topic = Counter(q.topic for q in questions)
    assert min(per_topic.values()) >= 13, per_topic
    types = Counter(q.type for q in questions)
    assert set(types) == set(QUESTION_TYPES)
    assert 0.20 <= types["card"] / len(questions) <= 0.40, types
    worked = {q.topic for q in questions if q.type in ("numeric", "order")}
    assert sorted(set(bank.topics) - worked) == [], "topics without a numeric or order question"


def test_no_test_wise_shortcut(bank):
    """Neither "pick the longest" (nor the shortest) nor "pick position k" beats 35% on single questions."""
    singles = [q for q in bank.questions.values() if q.type == "single"]
    assert longest_share(singles) <= 0.35 and shortest_share(singles) <= 0.35
    assert max(position_shares(singles).values()) <= 0.35
    # multi: how many options are right varies, and most questions have fewer than half right
    multis = [q for q in bank.questions.values() if q.type == "multi"]
    assert len(multi_right_counts(multis)) >= 3
    assert sum(2 * len(q.answer) > len(q.choices) for q in multis) <= len(multis) / 2


def test_every_wrong_choice_says_why_and_every_card_has_key_points(bank):
    assert missing_why_not(bank.questions.values()) == []
    assert cards_without_key_points(bank.questions.values()) == []


def test_no_choice_is_named_by_its_position(bank):
    """Choices are shown shuffled, so "the first option" or "choice 2" would point at the wrong one."""
    pattern = re.compile(r"\b(first|second|third|fourth|last) (option|choice|answer)\b|\b(option|choice) [1-9a-e]\b",
                         re.IGNORECASE)
    found = [f"{q.id}: {m.group(0)}" for q in bank.questions.values() if q.type in ("single", "multi")
             for text in (q.prompt, q.explanation, *q.why_not.values()) for m in [pattern.search(text)] if m]
    assert found == []


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


def named_choices(text: str) -> set[int]:
    """Choice indices a comment or docstring names: "choice 2", "choices 0-3", "choices 0, 2 and 4"."""
    found: set[int] = set()
    for match in re.finditer(r"choices? (\d+(?:\s*-\s*\d+)?(?:(?:,\s*|\s+and\s+|\s+or\s+|\s*\([^)]*\)\s*and\s+)"
                             r"\d+(?:\s*-\s*\d+)?)*)", text):
        for part in re.findall(r"\d+\s*-\s*\d+|\d+", match.group(1)):
            first, _, last = part.partition("-")
            found |= set(range(int(first), int(last or first) + 1))
    return found


def settled_choices() -> dict[str, set[int]]:
    """question id -> the choices its fact tests name, in comments and docstrings (the module's
    docstring counts for the sentences that name the question)."""
    settled: dict[str, set[int]] = {}
    for path in sorted(FACTS.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        tree, lines = ast.parse(source), source.splitlines()
        sentences = re.split(r"(?<=[.;])\s+", ast.get_docstring(tree) or "")
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            ids = [arg.value for dec in node.decorator_list if isinstance(dec, ast.Call)
                   and getattr(dec.func, "attr", "") == "verifies" for arg in dec.args]
            body = "\n".join(lines[node.lineno - 1:node.end_lineno])
            named = set().union(*(named_choices(c) for c in re.findall(r"#([^\n]*)", body)),
                                named_choices(ast.get_docstring(node) or ""))
            for qid in ids:
                settled.setdefault(qid, set()).update(
                    named, *(named_choices(s) for s in sentences if qid in s))
    return settled


def test_every_choice_of_a_verified_question_is_settled(bank):
    """A verified single/multi question's tests name each of its choices (`# choice N`, or the
    docstring for a choice that rests on a paper or the docs): half a claim proven is not verified."""
    settled = settled_choices()
    unsettled = [f"{q.id}: choices {sorted(set(range(len(q.choices))) - settled.get(q.id, set()))}"
                 for q in bank.questions.values()
                 if "verified" in q.tags and q.type in ("single", "multi")
                 and set(range(len(q.choices))) - settled.get(q.id, set())]
    assert unsettled == []
