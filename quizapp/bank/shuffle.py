"""The order a question's choices and items are shown in, and the "why not" lines for a pick.

Shown orders are shuffled so that position teaches nothing, but seeded by question and session so a
redraw never reorders; answers are always given back in file order, which is what is stored.
"""

from __future__ import annotations

import random

from quizapp.bank.model import Question


def choice_order(question: Question, seed: str) -> list[int]:
    """File indices of a single/multi question's choices in the order they are shown."""
    order = list(range(len(question.choices)))
    random.Random(f"choices:{question.id}:{seed}").shuffle(order)
    return order


def item_order(question: Question, seed: str) -> list[int]:
    """An order question's items, shuffled into an order that is never already the right one."""
    order = list(range(len(question.items)))
    random.Random(f"{question.id}:{seed}").shuffle(order)
    if order == sorted(order) and len(order) > 1:
        order = order[1:] + order[:1]
    return order


def picked_indices(question: Question, response) -> set[int]:
    """The file indices a single/multi response picked (nothing for anything unreadable)."""
    picks = response if isinstance(response, (list, tuple, set)) else [response]
    return {p for p in picks if isinstance(p, int) and not isinstance(p, bool) and 0 <= p < len(question.choices)}


def why_not_lines(question: Question, response) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(choice, why it is wrong) for the wrong choices picked, then for the others, in file order."""
    picked = picked_indices(question, response)
    lines = {i: (question.choices[i], text) for i, text in question.why_not.items()}
    return ([lines[i] for i in sorted(lines) if i in picked], [lines[i] for i in sorted(lines) if i not in picked])


def why_not_markdown(lines: list[tuple[str, str]], heading: str) -> str:
    """The lines as a Markdown list under a bold heading, each choice quoted before its reason."""
    return f"**{heading}**\n\n" + "\n".join(f"- *{choice}*: {why}" for choice, why in lines)
