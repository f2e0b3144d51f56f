"""Loading the files of a grade (the solution, an exercise's checks and their siblings) and describing
what goes wrong in them, for the child's entry point, the harness, the drills and the DDP ranks.

A leaf: it imports nothing of the checking side, so every module there can use it without a circle.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from pathlib import Path

from quizapp.checking.protocol import MESSAGE_CAP, capped

CHECKS_MODULE = "quizapp_exercise_checks"
# Checks modules the warm grader imported before forking this process, by exercise folder.
PRELOADED: dict[str, object] = {}
LEARNER_FRAMES = 20  # the learner's frames shown under an error, the innermost ones


def checks_key(exercise_dir: Path) -> str:
    return str(Path(exercise_dir).resolve())


def checks_module(exercise_dir: Path):
    """The exercise's checks module: the warm grader's copy when it has one, else loaded now."""
    module = PRELOADED.get(checks_key(exercise_dir))
    if module is None:
        return load_module(CHECKS_MODULE, exercise_dir / "checks.py")
    sys.modules[CHECKS_MODULE] = module
    return module


def type_name(obj) -> str:
    """The name of obj's class, read past any metaclass that would answer otherwise."""
    try:
        return str(type.__dict__["__name__"].__get__(type(obj)))
    except Exception:  # noqa: BLE001 - cannot happen for a real class; never let it raise
        return "object"


def safe_repr(value, limit: int = 200) -> str:
    """repr(value), cut to `limit`, or a note when the value's __repr__ fails."""
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError
    except BaseException:  # noqa: BLE001 - a learner's __repr__ may raise anything, even SystemExit
        return f"<a {type_name(value)} that could not be shown: its __repr__ failed>"
    return capped(text, limit)


def learner_frames(exc: BaseException, solution_path: str) -> str:
    """The traceback lines that are in the learner's file, most recent last (the innermost
    LEARNER_FRAMES of them: a deep recursion is not a page of the same line)."""
    mine = Path(solution_path).resolve()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == mine]
    shown = [f"  line {f.lineno}, in {f.name}: {capped((f.line or '').strip(), 200)}" for f in frames[-LEARNER_FRAMES:]]
    if len(frames) > LEARNER_FRAMES:
        shown.insert(0, f"  ... {len(frames) - LEARNER_FRAMES} earlier frames in your file")
    return "\n".join(shown)


def frames_below(exc: BaseException, solution_path: str) -> str:
    """The learner's frames on lines of their own under a message, or nothing."""
    try:
        frames = learner_frames(exc, solution_path)
    except Exception:  # noqa: BLE001 - a traceback we cannot read still leaves the message
        return ""
    return f"\n{frames}" if frames else ""


# An object's address in a message ("<ProcessGroup object at 0x7f9f...>") differs from run to run and
# tells the learner nothing: it goes, so that the same solution gets the same report every time.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def describe_exception(exc: BaseException, solution_path: str) -> str:
    """What the learner reads about an exception out of their code; never raises, whatever the
    exception's class, message or exit code does."""
    try:
        return capped(_ADDRESS.sub(">", _describe(exc, solution_path)))
    except BaseException:  # noqa: BLE001 - e.g. an exit code whose __eq__ exits; say what we can
        return f"{type_name(exc)} (it could not be described: its attributes failed when read)"


def _describe(exc: BaseException, solution_path: str) -> str:
    if isinstance(exc, SystemExit):
        return f"the solution called sys.exit({safe_repr(exc.code)}); a solution must return, not exit"
    if isinstance(exc, KeyboardInterrupt):
        return "the solution raised KeyboardInterrupt"
    head = f"{type_name(exc)}: {capped(safe_str(exc), MESSAGE_CAP // 2)}".strip()
    return head + frames_below(exc, solution_path)


def load_module(name: str, path: Path):
    """Import the file at `path` as module `name` (a solution, an exercise's checks or its siblings:
    exercise folders are not packages). Registered before it runs: dataclasses look their module up
    while a class is made."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def describe_load_error(exc: BaseException, path: str) -> str:
    try:
        return capped(_describe_load_error(exc, path))
    except BaseException:  # noqa: BLE001 - a SyntaxError subclass with strange attributes
        return f"the solution failed while being imported: {describe_exception(exc, path)}"


def _describe_load_error(exc: BaseException, path: str) -> str:
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        text = f"\n  {exc.text.rstrip()}" if exc.text else ""
        return f"the solution has a syntax error at {where}: {exc.msg}{text}"
    if isinstance(exc, ImportError):
        return f"the solution could not be imported: {describe_exception(exc, path)}"
    return f"the solution failed while being imported: {describe_exception(exc, path)}"


def safe_str(exc: BaseException) -> str:
    """str(exc), even when the solution's exception class cannot format itself."""
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ in the learner's exception
        return f"{type_name(exc)} (its message could not be shown: its __str__ failed)"
