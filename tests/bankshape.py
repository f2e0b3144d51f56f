"""How a test-wise guesser would fare on the bank's choice questions, and what each explanation lacks.

Run as a script to print the figures for some files: `python tests/bankshape.py questions/*.yaml`.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from quizapp.bank import load_bank, pack_files


def longest_share(singles) -> float:
    """Share of single questions whose right choice is (one of) the longest by characters."""
    hits = sum(len(q.choices[q.answer]) == max(map(len, q.choices)) for q in singles)
    return hits / len(singles) if singles else 0.0


def shortest_share(singles) -> float:
    """Share of single questions whose right choice is (one of) the shortest: the flip side of longest."""
    hits = sum(len(q.choices[q.answer]) == min(map(len, q.choices)) for q in singles)
    return hits / len(singles) if singles else 0.0


def position_shares(singles) -> dict[int, float]:
    """Share of single questions whose right choice sits at each index."""
    counts = Counter(q.answer for q in singles)
    return {k: counts[k] / len(singles) for k in sorted(counts)} if singles else {}


def multi_right_counts(multis) -> Counter:
    """How many questions have k right options, by k."""
    return Counter(len(q.answer) for q in multis)


def missing_why_not(questions) -> list[str]:
    """`id: choice i` for every wrong choice of a single/multi question without its why_not line."""
    out = []
    for q in questions:
        if q.type not in ("single", "multi"):
            continue
        right = set(q.answer) if q.type == "multi" else {q.answer}
        out += [f"{q.id}: choice {i}" for i in range(len(q.choices)) if i not in right and i not in q.why_not]
    return out


def cards_without_key_points(questions) -> list[str]:
    return [q.id for q in questions if q.type == "card" and not 3 <= len(q.key_points) <= 6]


def report(paths: list[Path]) -> str:
    bank = load_bank(pack_files(paths))
    questions = list(bank.questions.values())
    singles = [q for q in questions if q.type == "single"]
    multis = [q for q in questions if q.type == "multi"]
    lines = [str(e) for e in bank.errors]
    lines.append(f"{len(questions)} questions, {len(singles)} single, {len(multis)} multi")
    lines.append(f"right choice is the longest: {longest_share(singles):.0%}; the shortest: {shortest_share(singles):.0%}")
    lines.append("right choice by position: " + ", ".join(f"{k}: {v:.0%}" for k, v in position_shares(singles).items()))
    lines.append("multi, right options per question: " + ", ".join(
        f"{k} right: {n}" for k, n in sorted(multi_right_counts(multis).items())))
    lines.append(f"wrong choices without why_not: {len(missing_why_not(questions))}")
    lines.append(f"cards without 3-6 key points: {len(cards_without_key_points(questions))}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report([Path(p) for p in sys.argv[1:]] or [Path("questions")]))
