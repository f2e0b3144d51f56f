"""Counted words for messages: "1 line", "3 lines", never "3 line(s)"."""

from __future__ import annotations


def plural(n: int, word: str, words: str | None = None) -> str:
    """`n` and the word in the number it takes; `words` for an irregular plural."""
    return f"{n} {word if n == 1 else words or word + 's'}"
