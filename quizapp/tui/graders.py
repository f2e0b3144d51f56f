"""The app's one grader, on the study context: the grade panel (`widgets/gradepanel.py`) of every
screen that grades a file (an exercise, an interview's exercise) calls
`context.grader.grade(path, exercise, post, token=...)` and receives the messages of `tui/grading.py`,
each carrying `token`.

Light at start-up on purpose: the grading client loads on the first grade (or warm-up), not before
the first screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.message import Message

    from quizapp.catalog import Exercise
    from quizapp.study.store import Store


class WarmAppGrader:
    """The app's grader: warm children from the shared zygote; each grade recorded in the app's store
    (through grading.attempt, as every front end grades)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def warm_up(self) -> None:
        """Start the zygote now, so that the first grade finds torch imported."""
        from quizapp.grading import warm

        warm.shared().start()

    async def grade(self, path: Path, exercise: Exercise, post: Callable[[Message], object], *,
                    token: object = None) -> None:
        from quizapp.tui.grading import run_warm_grader

        await run_warm_grader(path, exercise, post, self.store, token=token)


class CommandGrader:
    """A grader command run as given (`quizapp grade --events`, or a test's fake), in `cwd`; the
    command records the grade itself."""

    def __init__(self, prefix: list[str], cwd: Path) -> None:
        self.prefix = prefix
        self.cwd = cwd

    def warm_up(self) -> None:
        pass  # nothing to start ahead: each grade is a process of its own

    async def grade(self, path: Path, exercise: Exercise, post: Callable[[Message], object], *,
                    token: object = None) -> None:
        from quizapp.tui.grading import grade_command, run_grader

        await run_grader(grade_command(self.prefix, path, exercise.id), post, cwd=self.cwd, token=token)
