"""What the grader's parent side and its child side agree on, in a module of its own that imports
nothing (no torch): the parent imports it without loading the child's side.

The result channel (the child's stdin, a socket): the parent writes HELLO and then a fresh key of
KEY_BYTES; the child signs every event with it. A message is cut to MESSAGE_CAP characters by both
sides alike. EXTRA_WRITABLE_ENV names the folders every grade may write besides its own.
"""

from __future__ import annotations

import os
from pathlib import Path

HELLO = b"quizapp-grade-channel-1\n"
KEY_BYTES = 32
MESSAGE_CAP = 4000  # characters of one message kept (in JSON, in the store, on screen)

# More folders every grade may write (os.pathsep-separated; the test suite's temp folder): set in the
# grader's environment, read by the parent (bubblewrap's writable binds) and the child (Landlock's rules).
EXTRA_WRITABLE_ENV = "QUIZAPP_GRADE_WRITABLE"


def extra_writable(env) -> list[Path]:
    """The folders EXTRA_WRITABLE_ENV names in `env` that exist."""
    return [Path(p) for p in env.get(EXTRA_WRITABLE_ENV, "").split(os.pathsep) if p and os.path.isdir(p)]


def capped(text: str, limit: int = MESSAGE_CAP) -> str:
    """`text` cut to at most `limit` characters, the note of how much was cut included."""
    if len(text) <= limit:
        return text
    keep = limit
    while True:  # the note's own length depends on how much it says was cut
        note = f"… (cut: {len(text) - keep} more characters)"
        if keep + len(note) <= limit or keep == 0:
            return text[:keep] + note
        keep = max(0, limit - len(note))
