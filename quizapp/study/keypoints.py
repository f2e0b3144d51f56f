"""Key points of a card: which ones the learner covered, and the rating that suggests."""

from __future__ import annotations

# A written answer that covers three quarters of the points is a good answer; under two fifths
# it is closer to not knowing. Easy stays the learner's own call: ticking cannot tell how fast
# the answer came.
GOOD_FROM = 0.75
HARD_FROM = 0.4


def coverage(covered: int, total: int) -> float:
    """The share of key points covered, 0..1 (a card without key points: 0)."""
    return min(1.0, max(0, covered) / total) if total > 0 else 0.0


def rating_from_key_points(covered: int, total: int) -> int:
    """The FSRS rating that ticking `covered` of `total` key points suggests: 1 Again, 2 Hard, 3 Good."""
    share = coverage(covered, total)
    if share >= GOOD_FROM:
        return 3
    if share >= HARD_FROM:
        return 2
    return 1


def parse_ticks(reply: str, total: int) -> list[int] | None:
    """0-based indices from a reply such as `1 3` or `1,2` (empty: none); None if it cannot be read."""
    parts = reply.replace(",", " ").split()
    if not all(p.isdecimal() and 1 <= int(p) <= total for p in parts):
        return None
    return sorted({int(p) - 1 for p in parts})
