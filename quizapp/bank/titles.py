"""A question named in one line, for lists that point at questions (a failed check's "review these")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

WIDTH = 90
MIN_SENTENCE = 40  # shorter first sentences are lead-ins


def short_title(prompt: str, width: int = WIDTH) -> str:
    """The prompt's first sentence, or as much of the prompt as fits in `width` characters when that
    sentence is too short to say what the question is about (a lead-in such as "Consider:")."""
    # A code block says little in one line: the words around it name the question.
    words = re.sub(r"```.*?(```|$)", " ", prompt, flags=re.S)
    text = " ".join((words if words.strip() else prompt).split())
    first = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0]
    if len(first) >= MIN_SENTENCE and len(first) <= width:
        return first
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def titles_of(ids: Iterable[str], questions: Mapping) -> tuple[list[tuple[str, str]], list[str]]:
    """([(id, title)] for the ids the bank has, [ids it does not have]): a check may name a question
    that a learner's own packs removed; it is skipped, and said so."""
    known, missing = [], []
    for qid in ids:
        q = questions.get(qid)
        if q is None:
            missing.append(qid)
        else:
            known.append((qid, short_title(q.prompt)))
    return known, missing
