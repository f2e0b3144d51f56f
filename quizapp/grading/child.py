"""Child side entry point: `python -m quizapp.grading.child`. Runs in the solution's own process.

Results go to a JSON-lines file of their own (never stdout), so nothing the solution prints can
fake or break them. The last line is {"event": "done"}; its absence tells the parent the process
was cut short (os._exit, a crash, a kill).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import traceback
import warnings
from pathlib import Path

CHECKS_MODULE = "quizapp_exercise_checks"
# Checks modules the warm grader imported before forking this process, by exercise folder.
PRELOADED: dict[str, object] = {}


def checks_key(exercise_dir: Path) -> str:
    return str(Path(exercise_dir).resolve())


def checks_module(exercise_dir: Path):
    """The exercise's checks module: the warm grader's copy when it has one, else loaded now."""
    module = PRELOADED.get(checks_key(exercise_dir))
    if module is None:
        return load_module(CHECKS_MODULE, exercise_dir / "checks.py")
    sys.modules[CHECKS_MODULE] = module
    return module


class EventWriter:
    def __init__(self, path: str):
        # A dup of the descriptor: if the solution closes or redirects sys.stdout, this stays.
        self._fh = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives as long as the process

    def emit(self, event: str, **payload) -> None:
        self._fh.write(json.dumps({"event": event, **payload}, default=str) + "\n")
        self._fh.flush()


def learner_frames(exc: BaseException, solution_path: str) -> str:
    """The traceback lines that are in the learner's file, most recent last."""
    mine = Path(solution_path).resolve()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == mine]
    return "\n".join(f"  line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames)


def describe_exception(exc: BaseException, solution_path: str) -> str:
    if isinstance(exc, SystemExit):
        return f"the solution called sys.exit({exc.code!r}); a solution must return, not exit"
    if isinstance(exc, KeyboardInterrupt):
        return "the solution raised KeyboardInterrupt"
    head = f"{type(exc).__name__}: {safe_str(exc)}".strip()
    try:
        frames = learner_frames(exc, solution_path)
    except Exception:  # noqa: BLE001 - a traceback we cannot read still leaves the message
        frames = ""
    return head + (f"\n{frames}" if frames else "")


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def describe_load_error(exc: BaseException, path: str) -> str:
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        text = f"\n  {exc.text.rstrip()}" if exc.text else ""
        return f"the solution has a syntax error at {where}: {exc.msg}{text}"
    if isinstance(exc, ImportError):
        return f"the solution could not be imported: {describe_exception(exc, path)}"
    return f"the solution failed while being imported: {describe_exception(exc, path)}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exercise-dir", required=True)
    parser.add_argument("--solution", required=True)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--results", required=True)
    parser.add_argument("--memory-mb", type=int, default=0)
    args = parser.parse_args(argv)
    sys.dont_write_bytecode = True  # no __pycache__ next to the learner's file
    out = EventWriter(args.results)
    try:
        run(args, out)
    except BaseException as exc:  # noqa: BLE001 - the grader must report, never crash
        out.emit("error", message=f"internal grader error: {type(exc).__name__}: {exc}")
    out.emit("done")
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a solution's atexit handlers or threads must not hang the grade.
    os._exit(0)


def run(args, out: EventWriter) -> None:
    warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
    try:
        import torch
    except ImportError as exc:
        out.emit("error", message=f"torch is not installed in this Python ({sys.executable}): {exc}")
        return
    from quizapp.grading import instrument
    from quizapp.grading.harness import CheckFailed, CheckSkipped, Context, error_inputs, signature_problem

    if args.device == "cuda" and not torch.cuda.is_available():
        out.emit("usage_error", message="--device cuda: CUDA is not available on this machine")
        return
    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    if args.memory_mb and device.type == "cpu":
        import resource

        limit = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    exercise_dir = Path(args.exercise_dir)
    checks = checks_module(exercise_dir)
    instrument.install()
    reference = load_module("quizapp_reference", exercise_dir / "reference.py")
    source = Path(args.solution).read_bytes()
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = source.count(b"\n", 0, exc.start) + 1
        out.emit("error", message=f"the solution is not UTF-8 text: byte 0x{source[exc.start]:02x} on line {line}; "
                                  "save the file as UTF-8")
        return
    try:
        solution = load_module("solution", Path(args.solution))
    except BaseException as exc:  # noqa: BLE001 - any failure to import is the learner's to see
        out.emit("error", message=describe_load_error(exc, args.solution))
        return
    spec = checks.CHECKS
    problems = [p for req in spec.required if (p := signature_problem(getattr(solution, req.name, None), req))]
    if problems:
        out.emit("error", message="\n".join(problems))
        return

    out.emit("start", device=device.type, torch=torch.__version__,
             checks=[{"id": c.id, "title": c.title} for c in spec.checks])
    ctx = Context(solution, reference, device, exercise_dir)
    for check in spec.checks:
        ctx.data = {}
        try:
            instrument.reset_torch_state()
            instrument.LOG.reset(device.type)
            check.run(ctx)
            status, message = "pass", ""
        except CheckFailed as exc:
            status, message = "fail", safe_str(exc)
        except CheckSkipped as exc:
            status, message = "skip", safe_str(exc)
        except BaseException as exc:  # noqa: BLE001 - an error in the solution is a check error
            status, message = "error", error_inputs(exc) + describe_exception(exc, args.solution)
        out.emit("check", id=check.id, title=check.title, status=status, message=message,
                 data=finite_only(ctx.data))


def safe_str(exc: BaseException) -> str:
    """str(exc), even when the solution's exception class cannot format itself."""
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ in the learner's exception
        return f"{type(exc).__name__} (its message could not be shown: its __str__ failed)"


def finite_only(value):
    """NaN and inf become None, so every event line is strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: finite_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_only(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main())
