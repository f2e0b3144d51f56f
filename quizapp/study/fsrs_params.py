"""Which FSRS parameters schedule reviews: the fitted ones of the open store, else FSRS's defaults.

Kept apart from the scheduler so that opening the store does not import fsrs.
"""

from __future__ import annotations

import math

_active: tuple[float, ...] | None = None


def parse(value) -> tuple[float, ...] | None:
    """A stored parameter list as a tuple, or None when it is absent or not a list of finite numbers."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return tuple(float(v) for v in value)


def set_active(parameters: tuple[float, ...] | None) -> None:
    global _active
    _active = parameters


def active() -> tuple[float, ...] | None:
    return _active
