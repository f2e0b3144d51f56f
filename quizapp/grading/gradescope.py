"""Gradescope's side of an autograder zip (`quizapp autograder gradescope ID` builds the zip).

`run_autograder` calls `python -m quizapp.grading.gradescope`: it finds the learner's file in
ROOT/submission, grades it like `quizapp grade` (a sandboxed child, on the CPU), and writes
ROOT/results/results.json in the format of Gradescope's autograder specification. ROOT is
/autograder, or $QUIZAPP_AUTOGRADER_ROOT (a test run outside Gradescope). `setup.sh` calls it with
`--selfcheck` once the install is done: the exercise's reference must pass there.

What the zip records (ROOT/source/autograder.json, written by the builder, read by `AutograderConfig`):
the exercise, the file a learner submits, each check's title, points and questions, the one-line
titles of those questions, the device, the time limit and the visibility settings.

The score: every check is worth its points (1 each unless the exercise or the builder said other).
A passed check earns them; a failed or errored one earns nothing; a skipped one (not applicable here)
earns them only when the grade as a whole passes, so full marks come exactly when `quizapp grade`
would exit 0. A solution that cannot run at all (syntax error, a crash, a timeout, a missing file)
scores 0, and the output says why.

Nothing here writes a learner's progress: the grade is not recorded, and quizapp's data folder is a
temporary one for as long as this runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from quizapp import __version__
from quizapp.atomic import write_atomically
from quizapp.grading.resolve import marker_exercise
from quizapp.grading.result import GradeReport, printable, shown_messages, shown_text

ROOT_ENV = "QUIZAPP_AUTOGRADER_ROOT"
DEFAULT_ROOT = "/autograder"
CONFIG_NAME = "autograder.json"
CONFIG_FORMAT = 1
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DEFAULT_TIMEOUT_S = 300.0  # Gradescope's machines are slower than a laptop; its own limit is longer
SKIPPED_FOLDERS = {"__pycache__", "__MACOSX"}
LISTED_FILES = 8  # files named in a "no such file" message at most
STDOUT_OUTPUT_CAP = 16 * 1024  # of the solution's own output, in run_autograder's (instructor-only) log


class ConfigError(Exception):
    """autograder.json is missing or does not say what a grade needs."""


@dataclass(frozen=True)
class GradedCheck:
    id: str
    title: str
    points: float
    questions: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "points": self.points, "questions": list(self.questions)}


@dataclass(frozen=True)
class AutograderConfig:
    """What one autograder zip grades, and how (autograder.json)."""

    exercise: str
    title: str
    submission: str  # the file name a learner submits, e.g. label_smoothing.py
    checks: tuple[GradedCheck, ...]
    questions: dict[str, str] = field(default_factory=dict)  # question id -> its one-line title
    device: str = "cpu"
    timeout_s: float = DEFAULT_TIMEOUT_S
    visibility: str = "visible"  # the tests' visibility (Gradescope's values)
    stdout_visibility: str = "hidden"  # run_autograder's log: instructors only, unless changed
    built_with: dict = field(default_factory=dict)  # versions pinned in setup.sh, for the record

    @property
    def total_points(self) -> float:
        return sum(c.points for c in self.checks)

    def points_of(self, check_id: str) -> float:
        return next((c.points for c in self.checks if c.id == check_id), 0.0)

    def to_json(self) -> dict:
        return {"format": CONFIG_FORMAT, "exercise": self.exercise, "title": self.title,
                "submission": self.submission, "device": self.device, "timeout_s": self.timeout_s,
                "visibility": self.visibility, "stdout_visibility": self.stdout_visibility,
                "checks": [c.to_json() for c in self.checks], "questions": dict(self.questions),
                "built_with": dict(self.built_with)}

    @classmethod
    def from_json(cls, data) -> AutograderConfig:
        """Read and check a config (a teacher may have edited it); ConfigError names what is wrong."""
        if not isinstance(data, dict):
            raise ConfigError("it is not a JSON object")
        if data.get("format") != CONFIG_FORMAT:
            raise ConfigError(f"format {data.get('format')!r} is not {CONFIG_FORMAT}: rebuild the zip with this quizapp")
        for key in ("exercise", "title", "submission"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ConfigError(f"'{key}' is missing or not a text")
        for key in ("visibility", "stdout_visibility"):
            if data.get(key, "visible") not in VISIBILITIES:
                raise ConfigError(f"'{key}' is {data[key]!r}, not one of {', '.join(VISIBILITIES)}")
        timeout = data.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 1 <= timeout <= 86400:
            raise ConfigError(f"'timeout_s' is {timeout!r}, not a number of seconds from 1 to 86400")
        if data.get("device", "cpu") not in ("cpu", "cuda", "auto"):
            raise ConfigError(f"'device' is {data['device']!r}, not cpu, cuda or auto")
        checks = []
        for item in data.get("checks") or ():
            points = item.get("points") if isinstance(item, dict) else None
            if (not isinstance(item, dict) or not isinstance(item.get("id"), str) or isinstance(points, bool)
                    or not isinstance(points, (int, float)) or not math.isfinite(points) or points < 0):
                raise ConfigError(f"a check is not {{'id', 'title', 'points' (0 or more), 'questions'}}: {item!r}")
            linked = item.get("questions") or []
            if not isinstance(linked, list):
                raise ConfigError(f"the questions of check '{item['id']}' are not a list of ids")
            checks.append(GradedCheck(item["id"], str(item.get("title") or item["id"]), float(points),
                                      tuple(str(q) for q in linked)))
        if not checks:
            raise ConfigError("it lists no checks")
        questions = data.get("questions") or {}
        if not isinstance(questions, dict):
            raise ConfigError("'questions' is not a mapping of question ids to titles")
        return cls(exercise=data["exercise"], title=data["title"], submission=data["submission"],
                   checks=tuple(checks), questions={str(k): str(v) for k, v in questions.items()},
                   device=data.get("device", "cpu"), timeout_s=float(timeout),
                   visibility=data.get("visibility", "visible"),
                   stdout_visibility=data.get("stdout_visibility", "hidden"),
                   built_with=dict(data.get("built_with") or {}))


def load_config(path: Path) -> AutograderConfig:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing: the zip was not built by `quizapp autograder gradescope`") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} does not read: {exc}") from None
    try:
        return AutograderConfig.from_json(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


# ---------------------------------------------------------------------------------------------------
# Which file is the submission


def find_submission(folder: Path, config: AutograderConfig) -> tuple[Path | None, str]:
    """(the file to grade, a note on how it was chosen: "" when it is the expected name at the top), or
    (None, what to submit). Gradescope keeps the folders of an uploaded zip or repository, so the
    expected name is looked for at any depth; failing that, the only .py file, or the only one whose
    marker names this exercise."""
    expected = config.submission
    if (folder / expected).is_file():
        return folder / expected, ""
    found = python_files(folder)
    named = [p for p in found if p.name == expected]
    if len(named) == 1:
        return named[0], f"Graded {relative(named[0], folder)}"
    if len(found) == 1:
        return found[0], f"Graded {relative(found[0], folder)}, the only .py file submitted (expected: {expected})"
    marked = [p for p in found if _marker(p) == config.exercise]
    if len(marked) == 1:
        return marked[0], (f"Graded {relative(marked[0], folder)}, the one .py file marked "
                           f"`# quizapp: exercise={config.exercise}` (expected: {expected})")
    return None, missing_message(folder, config, found)


def python_files(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_FOLDERS and not d.startswith("."))
        out += [Path(dirpath) / f for f in sorted(filenames)
                if f.endswith(".py") and not f.startswith(".") and (Path(dirpath) / f).is_file()]
    return out


def _marker(path: Path) -> str | None:
    try:
        return marker_exercise(path)
    except OSError:
        return None


def relative(path: Path, folder: Path) -> str:
    """A submitted file's name as the results show it (a name is the student's text too: escaped)."""
    try:
        return printable(path.relative_to(folder).as_posix())
    except ValueError:
        return printable(path.name)


def missing_message(folder: Path, config: AutograderConfig, found: list[Path]) -> str:
    ask = (f"Submit your solution as {config.submission} (`quizapp start {config.exercise}` writes its "
           "starter, with the signatures to fill in).")
    if found:
        names = [relative(p, folder) for p in found]
        shown = ", ".join(names[:LISTED_FILES]) + (f" and {len(names) - LISTED_FILES} more" if len(names) > LISTED_FILES else "")
        return f"No {config.submission} in the submission, and more than one other .py file ({shown}). {ask}"
    others = sorted(relative(Path(d) / f, folder) for d, _, files in os.walk(folder) for f in files) if folder.is_dir() else []
    listed = f" (it holds {', '.join(others[:LISTED_FILES])}{' and more' if len(others) > LISTED_FILES else ''})" if others else ""
    return f"No {config.submission} in the submission{listed}. {ask}"


# ---------------------------------------------------------------------------------------------------
# results.json


def _points(value: float) -> float:
    return round(value, 4)


def _test(name: str, score: float, max_score: float, passed: bool, output: str, config: AutograderConfig) -> dict:
    return {"name": name, "score": _points(score), "max_score": _points(max_score),
            "status": "passed" if passed else "failed", "output": output,
            "output_format": "text", "visibility": config.visibility}


def _review_line(check: GradedCheck) -> str:
    return f"\n\nQuestions to review: {', '.join(check.questions)}" if check.questions else ""


def results_for(report: GradeReport, config: AutograderConfig, *, notes: list[str], elapsed: float) -> dict:
    """Gradescope's results for a grade that ran (or tried to: status error or usage scores 0)."""
    by_id = {c.id: c for c in config.checks}
    ran = report.status in ("pass", "fail")
    messages = shown_messages(report.checks)
    tests, earned = [], 0.0
    for check, message in zip(report.checks, messages):
        graded = by_id.get(check.id, GradedCheck(check.id, check.title, 0.0))
        counts = ran and (check.status == "pass" or (check.status == "skip" and report.status == "pass"))
        if not ran and check.status == "pass":
            output = "This check passed, but the run did not finish, and a run that does not finish scores nothing."
        elif check.status == "skip":
            output = (f"Not applicable here, so it counts as passed: {message}" if counts else
                      f"Skipped: {message}\nA skipped check scores only when no other check fails.")
        elif check.status == "fail":
            output = message + _review_line(graded)
        else:
            output = message
        if check.id not in by_id:
            output += f"\n(This check is not in {CONFIG_NAME}: it is worth no points.)"
        earned += graded.points if counts else 0.0
        tests.append(_test(check.title, graded.points if counts else 0.0, graded.points, counts, output, config))
    reported = {c.id for c in report.checks}
    for graded in config.checks:
        if graded.id not in reported:
            tests.append(_test(graded.title, 0.0, graded.points, False,
                               "Not run: the solution could not be run (the reason is at the top).", config))
    output = summary(report, config, earned, notes)
    return _results(config, tests, earned, output, elapsed)


def not_graded(config: AutograderConfig, reason: str, *, elapsed: float) -> dict:
    """Results for a submission that was not graded at all (no file to grade): 0, and why."""
    tests = [_test(c.title, 0.0, c.points, False, "Not run: nothing was graded (the reason is at the top).", config)
             for c in config.checks]
    output = (f"{config.title} ({config.exercise}): not graded, 0 of {_points(config.total_points):g} points.\n\n"
              f"{reason}")
    return _results(config, tests, 0.0, output, elapsed)


def broken(reason: str, *, elapsed: float) -> dict:
    """Results when the autograder itself cannot work (its config or install is broken)."""
    return {"score": 0.0, "execution_time": max(0, round(elapsed)), "output_format": "text",
            "output": ("This submission could not be graded: the autograder is broken, not your file. "
                       f"Tell your instructor.\n\n{printable(reason)}"),
            "tests": []}


def _results(config: AutograderConfig, tests: list[dict], earned: float, output: str, elapsed: float) -> dict:
    return {"score": _points(earned), "execution_time": max(0, round(elapsed)), "output": output,
            "output_format": "text", "test_output_format": "text", "test_name_format": "text",
            "visibility": config.visibility, "stdout_visibility": config.stdout_visibility, "tests": tests}


def summary(report: GradeReport, config: AutograderConfig, earned: float, notes: list[str]) -> str:
    """The top of the results page: the verdict, how it was graded, and what to study next."""
    total = f"{_points(earned):g} of {_points(config.total_points):g} points"
    counted = report.counted
    if report.status == "pass":
        verdict = f"Passed: every check that applies here passed ({report.passed} of {counted}); {total}."
    elif report.status == "fail":
        verdict = f"{report.passed} of {counted} checks passed; {total}."
        if report.message:
            verdict += f"\n{report.message}"
    else:
        verdict = f"The solution could not be run, so it scores 0 ({total}):\n{report.message or 'no reason was given'}"
    lines = [f"{config.title} ({config.exercise})", verdict, *notes, ""]
    device = report.device or config.device
    versions = f"torch {report.torch} and quizapp {__version__}" if report.torch else f"quizapp {__version__}"
    lines.append(f"Graded on {device} with {versions}, in {report.duration_s:.1f} s.")
    lines.append(report.sandbox or "sandbox: none (the solution never started)")
    if report.review:
        lines += ["", "Study next: the questions your failed checks rest on."]
        for qid in report.review:
            title = config.questions.get(qid)
            lines.append(f"- {qid}: {title}" if title else f"- {qid}")
        lines.append("Grading this file with `quizapp grade` on your own machine puts them in your review queue.")
    return "\n".join(lines)


def write_results(root: Path, results: dict) -> Path:
    """results.json, written whole or not at all (a reader never sees half of it)."""
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "results.json"
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    write_atomically(target, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return target


# ---------------------------------------------------------------------------------------------------
# Running


def autograder_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)


@contextmanager
def private_home() -> Iterator[Path]:
    """quizapp's data folder, for as long as the grade runs: a fresh temporary one, never a learner's."""
    from quizapp.paths import HOME_ENV

    before = os.environ.get(HOME_ENV)
    home = Path(tempfile.mkdtemp(prefix="quizapp-autograder-home-"))
    os.environ[HOME_ENV] = str(home)
    try:
        yield home
    finally:
        if before is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = before
        shutil.rmtree(home, ignore_errors=True)


def _exercise(config: AutograderConfig):
    from quizapp.catalog import load_catalog

    exercise = load_catalog().get(config.exercise)
    if exercise is None:
        raise ConfigError(f"the installed quizapp {__version__} has no exercise '{config.exercise}': "
                          "rebuild the zip with the quizapp that has it")
    return exercise


def grade_submission(root: Path, source: Path) -> dict:
    """Grade ROOT/submission by the config in `source`; the results, whatever happens."""
    started = time.monotonic()
    try:
        return _grade_submission(root, source, started)
    except ConfigError as exc:
        print(f"quizapp autograder: {exc}")
        return broken(str(exc), elapsed=time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - whatever breaks, Gradescope still gets a results.json
        traceback.print_exc(file=sys.stdout)
        return broken(f"{type(exc).__name__}: {shown_text(exc)}", elapsed=time.monotonic() - started)


def _grade_submission(root: Path, source: Path, started: float) -> dict:
    config = load_config(source / CONFIG_NAME)
    exercise = _exercise(config)
    path, note = find_submission(root / "submission", config)
    if path is None:
        print(f"quizapp autograder: {note}")
        return not_graded(config, note, elapsed=time.monotonic() - started)
    notes = [note] if note else []
    marker = _marker(path)
    if marker is not None and marker != config.exercise:
        notes.append(f"Note: the file says it solves '{marker}'; it was graded as '{config.exercise}', "
                     "this assignment's exercise.")
    from quizapp.grading.runner import grade

    report = grade(path, exercise, device=config.device, timeout=config.timeout_s)
    results = results_for(report, config, notes=notes, elapsed=time.monotonic() - started)
    log_report(report, results)
    return results


def log_report(report: GradeReport, results: dict) -> None:
    """run_autograder's own output (Gradescope shows it to instructors): the results and what the
    solution printed."""
    print(results["output"])
    print()
    for check in report.checks:
        print(f"[{check.status}] {check.id}: {printable(check.message)[:300]}")
    if report.output:
        print("\nWhat the solution printed:")
        print(shown_text(report.output, STDOUT_OUTPUT_CAP))


def selfcheck(source: Path) -> int:
    """Grade the exercise's reference as a submission would be graded: 0 when it passes."""
    try:
        config = load_config(source / CONFIG_NAME)
        exercise = _exercise(config)
    except ConfigError as exc:
        print(f"quizapp autograder: {exc}", file=sys.stderr)
        return 1
    from quizapp.grading.runner import grade

    report = grade(exercise.reference, exercise, device=config.device, timeout=config.timeout_s)
    results = results_for(report, config, notes=[], elapsed=report.duration_s)
    if report.status == "pass" and results["score"] == _points(config.total_points):
        print(f"quizapp autograder: the reference of {config.exercise} passes here "
              f"({report.passed} checks, {results['score']:g} points; torch {report.torch}; {report.sandbox})")
        return 0
    print(f"quizapp autograder: the reference of {config.exercise} does not pass here, so no submission could:",
          file=sys.stderr)
    print(results["output"], file=sys.stderr)
    for check in report.checks:
        if check.status != "pass":
            print(f"[{check.status}] {check.id}: {printable(check.message)[:300]}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quizapp.grading.gradescope",
                                     description="Grade ROOT/submission for Gradescope and write ROOT/results/results.json.")
    parser.add_argument("--root", type=Path, default=None,
                        help=f"Gradescope's folder (default: ${ROOT_ENV}, else {DEFAULT_ROOT}).")
    parser.add_argument("--source", type=Path, default=None,
                        help="Where the zip was unpacked (default: ROOT/source).")
    parser.add_argument("--selfcheck", action="store_true",
                        help="Grade the exercise's reference instead (setup.sh does, once installed); exit 1 unless it passes.")
    args = parser.parse_args(argv)
    root = args.root or autograder_root()
    source = args.source or root / "source"
    with private_home():
        if args.selfcheck:
            return selfcheck(source)
        results = grade_submission(root, source)
    try:
        write_results(root, results)
    except OSError as exc:
        print(f"quizapp autograder: could not write {root / 'results' / 'results.json'}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
