"""A class's submissions graded together: `quizapp batch`'s core, without its terminal (that is
commands/batch.py).

- `find_submissions` reads the folder: one `.py` per student, or one folder per student holding
  `ID.py` or a single `.py`. Whatever cannot be graded (no Python file, two candidates, a symlink out
  of the folder, a file over 1 MB, a name that is not text) becomes that student's error, never the
  batch's.
- `Batch` grades them with a pool of warm graders, each its own zygote: every submission exactly as
  `quizapp grade --json` grades it (runner.grade: the same child, sandbox and limits), and writes
  one JSON per student (the schema-1 report, plus the student, the submission's digest and the
  exercise's version) atomically into the output folder. A rerun skips each student whose digest
  and exercise version are graded already.
- Confinement. Each grade's namespaces hide the submissions folder, the output folder and every
  other worker's scratch folder: a solution reads its own private copy, the installed package and
  the system, nothing of its classmates'. Where bubblewrap cannot be had, the copy is all there is,
  and `Batch.confinement` says reads are not confined.
- Nothing is recorded in a progress store: a teacher's store is not a student's.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from quizapp.atomic import replacing, write_atomically
from quizapp.grading import contain
from quizapp.grading.result import GradeReport
from quizapp.grading.runner import DEFAULT_TIMEOUT_S, grade
from quizapp.grading.warm import WarmGrader

MAX_BYTES = 1_000_000  # a submission over this is refused: no solution to these exercises is that long
RESULTS_CSV = "results.csv"
CANCELLED = "cancelled before its end"


class BatchError(Exception):
    """The batch cannot start (exit code 2): a folder that is not one, an output inside the submissions."""


@dataclass(frozen=True)
class Submission:
    """One student's entry: the file to grade, or why there is none."""

    student: str
    path: Path | None  # the Python file; None when `problem` says why there is none
    problem: str | None = None
    entry: str = ""  # the name in the submissions folder (a file or a folder)


# -- the submissions folder -----------------------------------------------------------------------

def find_submissions(root: Path, exercise_id: str) -> list[Submission]:
    """Every student's submission in `root`, sorted by name. Hidden entries and __pycache__ are no one's."""
    if not root.is_dir():
        raise BatchError(f"{root} is not a folder of submissions")
    real_root = root.resolve()
    by_student: dict[str, list[Submission]] = {}
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        sub = _one_entry(Path(entry.path), real_root, exercise_id)
        by_student.setdefault(sub.student, []).append(sub)
    found = []
    for student, subs in sorted(by_student.items()):
        if len(subs) > 1:
            entries = " and ".join(s.entry for s in subs)
            found.append(Submission(student, None, f"two submissions for {student}: {entries}; keep one",
                                    subs[0].entry))
        else:
            found.append(subs[0])
    return found


def _one_entry(path: Path, real_root: Path, exercise_id: str) -> Submission:
    name = path.name
    student = path.stem if not path.is_dir() else name
    if not _is_text(name):
        return Submission(_printable(student), None, "the name is not valid text (UTF-8): rename it", _printable(name))
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(real_root):
            return Submission(student, None, "a symlink that leads out of the submissions folder: copy the file in",
                              name)
    if path.is_dir():
        return _from_folder(path, real_root, exercise_id, student)
    if path.suffix != ".py":
        return Submission(student, None, f"{name} is not a Python file: submit {exercise_id}.py or {student}.py",
                          name)
    return _checked_file(student, path, real_root, name)


def _from_folder(folder: Path, real_root: Path, exercise_id: str, student: str) -> Submission:
    named = folder / f"{exercise_id}.py"
    if named.is_file() or named.is_symlink():
        return _checked_file(student, named, real_root, folder.name)
    candidates = sorted(p for p in folder.iterdir() if p.suffix == ".py" and not p.name.startswith("."))
    if not candidates:
        return Submission(student, None, f"no Python file in {folder.name}/: submit {exercise_id}.py", folder.name)
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates[:5]) + (" ..." if len(candidates) > 5 else "")
        return Submission(student, None, f"{len(candidates)} Python files in {folder.name}/ ({names}) and none "
                                         f"named {exercise_id}.py: name the solution {exercise_id}.py", folder.name)
    return _checked_file(student, candidates[0], real_root, folder.name)


def _checked_file(student: str, path: Path, real_root: Path, entry: str) -> Submission:
    if path.is_symlink() and not path.resolve().is_relative_to(real_root):
        return Submission(student, None, f"{path.name} is a symlink that leads out of the submissions folder", entry)
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Submission(student, None, f"{path.name} cannot be read: {exc.strerror or exc}", entry)
    if not path.is_file():
        return Submission(student, None, f"{path.name} is not a regular file", entry)
    if size > MAX_BYTES:
        return Submission(student, None, f"{path.name} is {size / 1e6:.1f} MB, over the 1 MB a submission may be",
                          entry)
    return Submission(student, path, None, entry)


def _is_text(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes come back from the OS as lone surrogates
        return False
    return name.isprintable()


def _printable(name: str) -> str:
    return name.encode("utf-8", errors="replace").decode("utf-8").encode("ascii", errors="backslashreplace").decode()


# -- shards ---------------------------------------------------------------------------------------

def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 0 <= I < N (a Kubernetes completion index or a Slurm array index as it comes)."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise BatchError(f"--shard takes I/N, e.g. 0/4 (got {text!r})") from None
    if count < 1 or not 0 <= index < count:
        raise BatchError(f"--shard {text}: I must be from 0 to N-1, and N at least 1")
    return index, count


def shard_of(student: str, count: int) -> int:
    """The shard a student belongs to: the same on every machine, whoever else is in the class."""
    return int.from_bytes(hashlib.sha256(student.encode("utf-8", "surrogateescape")).digest()[:8], "big") % count


# -- versions and results -------------------------------------------------------------------------

def exercise_version(folder: Path) -> str:
    """A digest of the exercise's files and quizapp's version: a grade made under another is stale."""
    from quizapp import __version__

    h = hashlib.sha256(__version__.encode())
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def result_path(out: Path, student: str) -> Path:
    return out / f"{student}.json"


def read_result(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("student"), str) else None


def digest_of(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def problem_report(sub: Submission, exercise_id: str) -> GradeReport:
    return GradeReport(exercise=exercise_id, file=sub.entry, status="error", message=sub.problem, device=None,
                       torch=None, duration_s=0.0)


# -- the run --------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """One student's result as the batch saw it."""

    student: str
    status: str  # pass, fail or error


@dataclass
class Batch:
    """Grade `submissions` of `exercise` into `out`, `jobs` at a time."""

    exercise: object  # catalog.Exercise
    submissions_dir: Path
    submissions: list[Submission]
    out: Path
    jobs: int = 2
    device: str = "cpu"
    timeout: float = DEFAULT_TIMEOUT_S
    regrade: bool = False
    hide: tuple[Path, ...] = ()  # more paths no grade may see (the CSV the batch writes)
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def confinement(self) -> str:
        """The header's words for what a submission can read."""
        why = contain.refused()
        if why is None:
            return ("reads confined: each grade sees its own submission, the installed package and the "
                    "system, nothing of the other students' (bubblewrap)")
        return (f"reads are NOT confined ({why}): each submission is graded from a private copy, but a "
                "solution could read other files on this machine, the other submissions included")

    def pending(self) -> tuple[list[Submission], list[Outcome]]:
        """The submissions to grade now, and the outcomes an earlier run left that still hold."""
        version = exercise_version(self.exercise.folder)
        todo, kept = [], []
        for sub in self.submissions:
            previous = None if self.regrade else read_result(result_path(self.out, sub.student))
            if previous is not None and sub.path is not None and previous.get("exercise_version") == version:
                try:
                    digest = digest_of(sub.path.read_bytes())
                except OSError:
                    digest = None
                if digest is not None and previous.get("digest") == digest:
                    kept.append(Outcome(sub.student, str(previous.get("status"))))
                    continue
            todo.append(sub)
        return todo, kept

    def run(self, todo: list[Submission], on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
        """Grade `todo`, calling `on_done` as each finishes; stops early when `cancel` is set (what is
        graded stays written; a grade cut short is not)."""
        self.out.mkdir(parents=True, exist_ok=True)
        version = exercise_version(self.exercise.folder)
        done: list[Outcome] = []
        lock = threading.Lock()

        def finished(outcome: Outcome | None) -> None:
            if outcome is None:
                return
            with lock:
                done.append(outcome)
                if on_done is not None:
                    on_done(outcome)

        for sub in todo:  # what cannot be graded is written at once, with no grader started for it
            if sub.path is None and not self.cancel.is_set():
                finished(self._write(sub, problem_report(sub, self.exercise.id), None, version))
        gradeable = [sub for sub in todo if sub.path is not None]
        if not gradeable or self.cancel.is_set():
            return done
        root = Path(tempfile.mkdtemp(prefix="quizapp-batch-"))  # every worker's scratch folder, each its own
        hidden = (self.submissions_dir.resolve(), self.out.resolve(), root, *self.hide)
        workers: queue.SimpleQueue = queue.SimpleQueue()
        graders = []
        try:
            for i in range(max(1, min(self.jobs, len(gradeable)))):
                own = root / f"w{i}"
                own.mkdir()
                grader = WarmGrader(scratch_parent=own, hidden=hidden, fresh_shm=True)
                grader.start()  # every zygote imports torch at once, while the first grades wait
                graders.append(grader)
                workers.put((grader, own))

            def one(sub: Submission) -> None:
                if self.cancel.is_set():
                    return
                grader, own = workers.get()
                try:
                    finished(self._grade_one(sub, grader, own, hidden, version))
                finally:
                    workers.put((grader, own))

            with ThreadPoolExecutor(max_workers=len(graders), thread_name_prefix="quizapp-batch") as pool:
                for future in [pool.submit(one, sub) for sub in gradeable]:
                    future.result()
        finally:
            closing = [threading.Thread(target=grader.close) for grader in graders]  # each waits for its zygote
            for thread in closing:
                thread.start()
            for thread in closing:
                thread.join()
            shutil.rmtree(root, ignore_errors=True)
        return done

    def _grade_one(self, sub: Submission, grader: WarmGrader, own: Path, hidden, version: str) -> Outcome | None:
        try:
            content = sub.path.read_bytes()
        except OSError as exc:
            problem = Submission(sub.student, None, f"cannot be read: {exc.strerror or exc}", sub.entry)
            return self._write(sub, problem_report(problem, self.exercise.id), None, version)
        report = grade(sub.path, self.exercise, content=content, device=self.device, timeout=self.timeout,
                       cancel=self.cancel, warm=grader, hidden=hidden, scratch_parent=own)
        if self.cancel.is_set():
            return None  # cut short: says nothing of the solution, and is graded again next run
        report.file = str(Path(self.submissions_dir.name) / sub.path.relative_to(self.submissions_dir))
        return self._write(sub, report, digest_of(content), version)

    def _write(self, sub: Submission, report: GradeReport, digest: str | None, version: str) -> Outcome:
        data = {**report.to_json(), "student": sub.student, "digest": digest, "exercise_version": version,
                "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        write_atomically(result_path(self.out, sub.student), json.dumps(data, indent=1) + "\n")
        return Outcome(sub.student, report.status)


def check_places(submissions_dir: Path, out: Path) -> None:
    """Refuse outputs inside the submissions (they would be read as a student) and a submissions folder
    that holds what every grade needs (hiding it would hide the grader)."""
    subs, dest = submissions_dir.resolve(), out.resolve()
    if dest == subs or dest.is_relative_to(subs):
        raise BatchError(f"the output folder {out} is inside the submissions folder: choose one beside it")
    import quizapp

    needed = [Path(quizapp.__file__).resolve().parent, Path(sys.prefix).resolve(), Path(sys.executable).resolve()]
    for path in needed:
        if path.is_relative_to(subs):
            raise BatchError(f"the submissions folder {submissions_dir} holds {path}, which every grade needs: "
                             "put the submissions in a folder of their own")


# -- the table ------------------------------------------------------------------------------------

def check_ids(results: Iterable[dict]) -> list[str]:
    """Every check id seen, in the order the grades report them."""
    ids: dict[str, None] = {}
    for data in results:
        for check in data.get("checks") or ():
            if isinstance(check, dict) and isinstance(check.get("id"), str):
                ids.setdefault(check["id"])
    return list(ids)


def row_of(data: dict, ids: list[str]) -> dict:
    checks = {c.get("id"): c for c in data.get("checks") or () if isinstance(c, dict)}
    passed = sum(1 for c in checks.values() if c.get("status") == "pass")
    counted = sum(1 for c in checks.values() if c.get("status") != "skip")
    row = {"student": data.get("student"), "status": data.get("status"), "checks_passed": passed,
           "checks_total": counted, "score": round(passed / counted, 4) if counted else 0.0,
           "duration_s": data.get("duration_s")}
    for check_id in ids:
        row[check_id] = (checks.get(check_id) or {}).get("status", "")
    return row


def write_csv(path: Path, results: list[dict]) -> None:
    """results.csv: student, status, checks passed, checks total (skipped ones do not count), score
    (their fraction passed), duration, and each check's status."""
    ids = check_ids(results)
    rows = [row_of(d, ids) for d in sorted(results, key=lambda d: str(d.get("student")))]
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["student", "status", "checks_passed", "checks_total", "score",
                                                "duration_s", *ids])
        writer.writeheader()
        writer.writerows(rows)


def read_results(folder: Path) -> list[dict]:
    """The per-student results in `folder` (files that are not one are passed over)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = read_result(path)
        if data is not None:
            found.append(data)
    return found


def merge(folders: list[Path]) -> tuple[list[dict], list[str]]:
    """The shards' results joined: one per student (the latest graded where two shards hold one),
    and warnings to show."""
    by_student: dict[str, dict] = {}
    warnings: list[str] = []
    exercises: set[str] = set()
    for folder in folders:
        if not folder.is_dir():
            raise BatchError(f"{folder} is not a folder of batch results")
        for data in read_results(folder):
            exercises.add(str(data.get("exercise")))
            student = data["student"]
            other = by_student.get(student)
            if other is not None:
                warnings.append(f"{student} is in two shards' results; the later grade is kept")
                if str(other.get("graded_at")) > str(data.get("graded_at")):
                    continue
            by_student[student] = data
    if len(exercises) > 1:
        raise BatchError(f"the results are of different exercises ({', '.join(sorted(exercises))}): merge one at a time")
    return [by_student[s] for s in sorted(by_student)], warnings


def summary(results: list[dict]) -> dict:
    """Pass rate, and the checks failed most often with their most common message."""
    total = len(results)
    passed = sum(1 for d in results if d.get("status") == "pass")
    errors = sum(1 for d in results if d.get("status") == "error")
    failed: dict[str, dict] = {}
    for data in results:
        for check in data.get("checks") or ():
            if not isinstance(check, dict) or check.get("status") not in ("fail", "error"):
                continue
            entry = failed.setdefault(str(check.get("id")), {"title": check.get("title"), "count": 0, "messages": {}})
            entry["count"] += 1
            message = str(check.get("message") or "")
            entry["messages"][message] = entry["messages"].get(message, 0) + 1
    most = sorted(failed.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    return {"students": total, "passed": passed, "failed": total - passed - errors, "errors": errors,
            "checks": [{"id": cid, "title": e["title"], "count": e["count"],
                        "message": max(e["messages"].items(), key=lambda kv: kv[1])[0]} for cid, e in most]}
