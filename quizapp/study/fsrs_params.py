"""Reading the FSRS parameters a store keeps (fitted by `quizapp optimize`, or imported).

Kept apart from the scheduler so that opening the store does not import fsrs. No process-wide
state: every schedule call is handed the store's parameters (`store.fsrs_parameters()`).
"""

from __future__ import annotations

import math


def parse(value) -> tuple[float, ...] | None:
    """A stored parameter list as a tuple, or None when it is absent or not a list of finite numbers."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return tuple(float(v) for v in value)
