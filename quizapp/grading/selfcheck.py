"""`quizapp exercises check`: every exercise is whole before a learner meets it.

For each exercise folder: its exercise.yaml reads and says what the catalog and the app need (the
id of its folder, a topic of the bank, a difficulty from 1 to 5, a statement, hints), its files are
there and carry the exercise marker, its reference passes every check, and its starter fails
cleanly (no check passes by accident, none stops with an internal grader error).

A debugging drill (an id starting `debug_`) also names its source, a public report as
`owner/repo#N: title`, in exercise.yaml and in its starter, and states its symptom; its starter is the
broken script, which hides nothing: it fails its symptom check and passes `honest-fix`.

In a source checkout, the exercise's buggy solutions (tests/grader/buggy/<id>/, beside the exercises
folder) are graded too: each must hold its header (quizapp/grading/mutants.py), the starter must hold
starter.expect, and every check must be failed by some buggy solution. An installed quizapp has no
buggy solutions, and says nothing of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from quizapp.catalog import is_drill_id
from quizapp.grading import mutants
from quizapp.grading.resolve import marker_exercise
from quizapp.grading.result import GradeReport

FILES = ("exercise.yaml", "starter.py", "reference.py", "checks.py")
INTERNAL = "internal grader error"
SOURCE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+#\d+: \S")  # owner/repo#N: title
DRILL_ALLOWED_PASS = {"honest-fix"}  # the broken script hides nothing, so this check passes for it
PLACEHOLDER = "TODO(author)"  # what `quizapp exercises new` leaves for the author to write
# A grade: (file, exercise folder, exercise id, device or None for the command's own) -> its report.
Grade = Callable[..., GradeReport]


@dataclass
class ExerciseCheck:
    """What `check_exercise` found for one folder: problems (empty when it is whole) and the two grades."""

    id: str
    problems: list[str] = field(default_factory=list)
    reference: GradeReport | None = None
    starter: GradeReport | None = None
    buggy: int | None = None  # buggy solutions graded (None: none looked at)

    @property
    def ok(self) -> bool:
        return not self.problems


def metadata_problems(folder: Path, topics: Iterable[str]) -> list[str]:
    """What is wrong with the folder's files and exercise.yaml, without running anything."""
    import yaml

    problems = [f"{name} is missing" for name in FILES if not (folder / name).is_file()]
    if not (folder / "exercise.yaml").is_file():
        return problems
    try:
        data = yaml.safe_load((folder / "exercise.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return [*problems, f"exercise.yaml does not read: {exc}"]
    if not isinstance(data, dict):
        return [*problems, "exercise.yaml is not a mapping of fields"]
    if data.get("id") != folder.name:
        problems.append(f"exercise.yaml: id is {data.get('id')!r}, but the folder is {folder.name!r}")
    for key in ("title", "statement"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"exercise.yaml: {key} is missing or empty")
    topics = set(topics)
    if data.get("topic") not in topics:
        problems.append(f"exercise.yaml: topic {data.get('topic')!r} is not a topic of the question bank")
    difficulty = data.get("difficulty")
    if not isinstance(difficulty, int) or isinstance(difficulty, bool) or not 1 <= difficulty <= 5:
        problems.append(f"exercise.yaml: difficulty is {difficulty!r}, expected a whole number from 1 to 5")
    hints = data.get("hints")
    if not isinstance(hints, list) or not hints or not all(isinstance(h, str) and h.strip() for h in hints):
        problems.append("exercise.yaml: hints must be a non-empty list of texts")
    for name in ("starter.py", "reference.py"):
        path = folder / name
        if path.is_file() and marker_exercise(path) != folder.name:
            problems.append(f"{name} does not carry `# quizapp: exercise={folder.name}` in its first lines")
    problems += placeholder_problems(folder)
    if is_drill_id(folder.name):
        problems += drill_problems(folder, data)
    return problems


def placeholder_problems(folder: Path) -> list[str]:
    """The scaffold's placeholders still in the exercise's files, each file once."""
    problems = []
    for name in FILES:
        path = folder / name
        try:
            count = path.read_text(encoding="utf-8").count(PLACEHOLDER) if path.is_file() else 0
        except (OSError, UnicodeDecodeError):
            continue
        if count:
            problems.append(f"{name} still holds {count} {PLACEHOLDER} placeholder{'s' if count > 1 else ''}: "
                            "write what each asks for")
    return problems


def drill_problems(folder: Path, data: dict) -> list[str]:
    """A drill names the public report its bug comes from, in exercise.yaml and in the starter, and its symptom."""
    problems = []
    source = data.get("source")
    if not isinstance(source, str) or not SOURCE.match(source):
        problems.append(f"exercise.yaml: source is {source!r}, expected 'owner/repo#N: title' (the public report)")
    elif (folder / "starter.py").is_file():
        where = source.split(":", 1)[0]
        if where not in (folder / "starter.py").read_text(encoding="utf-8", errors="replace"):
            problems.append(f"starter.py does not name its source {where}")
        if where not in str(data.get("statement", "")):
            problems.append(f"the statement does not name its source {where}")
    if not isinstance(data.get("symptom"), str) or not data["symptom"].strip():
        problems.append("exercise.yaml: symptom is missing or empty (one line: what the broken script shows)")
    return problems


def grade_problems(reference: GradeReport, starter: GradeReport, *, drill: bool = False) -> list[str]:
    """What the two grades say is wrong: a reference that does not pass, a starter that does or that
    breaks the grader (a drill's starter may pass `honest-fix`, and nothing else)."""
    problems = []
    if reference.status != "pass":
        bad = [c for c in reference.checks if c.status != "pass"]
        shown = "; ".join(f"{c.id}: {c.status} ({c.message[:200]})" for c in bad[:3])
        problems.append(f"the reference does not pass ({reference.status}"
                        + (f": {reference.message}" if reference.message else "") + ")"
                        + (f": {shown}" if shown else ""))
    if starter.status == "pass":
        problems.append("the starter passes every check: the checks do not test the exercise")
    passing = [c.id for c in starter.checks if c.status == "pass" and not (drill and c.id in DRILL_ALLOWED_PASS)]
    if passing and starter.status != "pass":
        problems.append(f"the starter passes {', '.join(passing)}: those checks pass without a solution")
    internal = [c.id for c in [*reference.checks, *starter.checks] if INTERNAL in c.message]
    if internal or INTERNAL in (reference.message or "") + (starter.message or ""):
        problems.append(f"an internal grader error in {', '.join(internal) or 'the grade'}")
    return problems


def link_problems(folder: Path, check_ids: Iterable[str], question_ids: Iterable[str]) -> list[str]:
    """Every check names 1 to 4 questions of the bank (exercise.yaml `questions:`), and only checks do."""
    import yaml

    try:
        links = (yaml.safe_load((folder / "exercise.yaml").read_text(encoding="utf-8")) or {}).get("questions") or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
        return []  # metadata_problems says so
    if not isinstance(links, dict):
        return ["exercise.yaml: questions must map each check id to a list of question ids"]
    checks, known = list(check_ids), set(question_ids)
    problems = [f"check {c} names no question (exercise.yaml `questions:`)" for c in checks if not links.get(c)]
    problems += [f"exercise.yaml `questions:` names {c!r}, which is not a check" for c in links if c not in checks]
    for check, ids in links.items():
        ids = ids if isinstance(ids, list) else [ids]
        if len(ids) > 4 or len(set(ids)) != len(ids):
            problems.append(f"check {check}: 1 to 4 distinct questions, got {ids}")
        problems += [f"check {check} names {q!r}, which is not a question of the bank" for q in ids if q not in known]
    return problems


def buggy_problems(folder: Path, check_ids: list[str], starter: GradeReport, grade: Grade,
                   workers: int = 2) -> tuple[list[str], int | None]:
    """What the exercise's buggy solutions say is wrong, and how many were graded (None, and no
    problem, where there are none to look at: an installed quizapp). Each header must read, name only
    the exercise's checks and hold for its grade; starter.expect must hold for the starter's grade;
    and every check must be failed by a buggy solution written for it."""
    root = mutants.buggy_root(folder.parent)
    if not root.is_dir():
        return [], None
    where = root / folder.name
    shown = f"tests/grader/buggy/{folder.name}"
    files = mutants.buggy_files(where)
    if not files:
        return [f"no buggy solutions in {shown}/: every check needs one that fails it"], 0
    problems: list[str] = []
    headers: dict[Path, mutants.Expectation] = {}
    for path in files:
        try:
            headers[path] = mutants.read(path)
        except (mutants.HeaderError, OSError, UnicodeDecodeError) as exc:
            problems.append(str(exc))
    for expect in headers.values():
        problems += mutants.unknown_checks(expect, check_ids)
    runnable = {p: e for p, e in headers.items() if not mutants.unknown_checks(e, check_ids)}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        reports = dict(zip(runnable, pool.map(lambda p: grade(p, folder, folder.name, runnable[p].device), runnable)))
    for path, report in reports.items():
        found = mutants.judge(runnable[path], report.status, report.checks, report.message)
        if found:
            problems.append(f"{path.name}: its header does not hold: " + "; ".join(found[:3])
                            + (f"; and {len(found) - 3} more" if len(found) > 3 else ""))
    expect_file = where / mutants.STARTER_FILE
    if not expect_file.is_file():
        problems.append(f"no {mutants.STARTER_FILE} in {shown}/: say what the starter's grade must show")
    else:
        try:
            expect = mutants.read(expect_file)
        except (mutants.HeaderError, OSError, UnicodeDecodeError) as exc:
            problems.append(str(exc))
        else:
            found = mutants.unknown_checks(expect, check_ids) or mutants.judge(
                expect, starter.status, starter.checks, starter.message)
            if found:
                problems.append(f"{mutants.STARTER_FILE} does not hold for the starter: " + "; ".join(found[:3]))
    counted = [e for p, e in headers.items() if p.stem not in mutants.NOT_COUNTED]
    problems += [f"no buggy solution fails {cid}: add one to {shown}/" for cid in mutants.unfailed(counted, check_ids)]
    return problems, len(reports)


def check_exercise(folder: Path, topics: Iterable[str], grade: Grade, question_ids: Iterable[str] = (), *,
                   buggy: bool = True, workers: int = 2) -> ExerciseCheck:
    """Check one folder; `grade(file, folder, exercise_id, device)` runs a grade (the warm grader's,
    usually; device None for the default). With `buggy`, the buggy solutions of a source checkout too."""
    result = ExerciseCheck(folder.name, metadata_problems(folder, topics))
    if any(p.endswith("is missing") for p in result.problems):
        return result  # nothing to run
    result.reference = grade(folder / "reference.py", folder, folder.name, None)
    result.starter = grade(folder / "starter.py", folder, folder.name, None)
    result.problems += grade_problems(result.reference, result.starter, drill=is_drill_id(folder.name))
    if result.reference.checks:
        check_ids = [c.id for c in result.reference.checks]
        result.problems += link_problems(folder, check_ids, question_ids)
        if buggy and result.reference.status == "pass":
            found, result.buggy = buggy_problems(folder, check_ids, result.starter, grade, workers)
            result.problems += found
    return result
