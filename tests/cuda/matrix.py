"""The grading matrix of the GPU programme: every exercise's (and drill's) reference, starter and buggy
solutions, graded with `--device cuda` and, for comparison, `--device cpu`.

Found on disk, never listed: an exercise is a folder of exercises/ with its exercise.yaml, checks.py and
reference.py (a folder still being written is left out until it has all three); a drill is one whose id
starts with `debug_`; the buggy solutions are tests/grader/buggy/<id>/*.py (sub-folders, such as
ddp_accumulation's broken ranks, are driven by their own tests, not graded directly).

References and starters go through the CLI cold (`quizapp grade --json` in a fresh process: what a
learner runs, timed as they would see it); buggy files through the warm grader, as gradeutil does. The
CUDA references are graded one at a time first, so that their wall times are not inflated by other
grades; everything else runs `workers` at a time.

Used by tests/cuda/test_cuda_grades.py and by benchmarks/gpu/grade_all.py, which writes the results as
JSON; the tests read that file instead of grading again when QUIZAPP_CUDA_GRADES names it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
BUGGY = ROOT / "tests" / "grader" / "buggy"
GRADES_ENV = "QUIZAPP_CUDA_GRADES"
WORKERS_ENV = "QUIZAPP_GRADE_WORKERS"
ONLY_CACHED_ENV = "QUIZAPP_CUDA_GRADES_ONLY"  # set by run.sh: what its grading step did not reach is skipped
REQUIRED = ("exercise.yaml", "checks.py", "reference.py")
# What a check says on the CPU when the loop itself turns AMP off off-CUDA (amp_training's CUDA_GATE):
# on CUDA that loop runs AMP, so the check is expected to pass there.
CPU_ONLY_FAILURE = "this grade ran on CPU"

if str(ROOT / "tests" / "grader") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "grader"))


def exercise_dirs() -> list[Path]:
    """Every complete exercise folder (drills included), by id."""
    if not EXERCISES.is_dir():
        return []
    return sorted(d for d in EXERCISES.iterdir() if d.is_dir() and all((d / f).is_file() for f in REQUIRED))


def is_drill(exercise: str) -> bool:
    return exercise.startswith("debug_")


def buggy_files(exercise: str) -> list[Path]:
    folder = BUGGY / exercise
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


@dataclass(frozen=True)
class Job:
    exercise: str
    kind: str  # reference, starter or buggy
    file: str  # relative to the repository's root
    device: str  # cuda or cpu

    @property
    def cold(self) -> bool:
        return self.kind != "buggy"

    def args(self) -> tuple:
        return (str(ROOT / self.file), "--device", self.device, "--exercise", self.exercise)


def rel(path: Path) -> str:
    return str(path.resolve().relative_to(ROOT))


def jobs(devices: tuple[str, ...] = ("cuda", "cpu")) -> list[Job]:
    """Every grade of the matrix: references on every device, starters on CUDA, buggy files on every
    device (CUDA's verdicts are compared with the CPU's)."""
    found = []
    for folder in exercise_dirs():
        ex = folder.name
        found += [Job(ex, "reference", rel(folder / "reference.py"), d) for d in devices]
        if (folder / "starter.py").is_file() and "cuda" in devices:
            found.append(Job(ex, "starter", rel(folder / "starter.py"), "cuda"))
        found += [Job(ex, "buggy", rel(p), d) for p in buggy_files(ex) for d in devices]
    return found


def run(job: Job) -> dict:
    """Grade one job; the result as plain JSON-ready data, with its wall time."""
    from gradeutil import run_cold

    start = time.perf_counter()
    try:
        if job.cold:
            graded = run_cold(job.args())
        else:
            from warmutil import grade_warm

            graded = grade_warm(job.args())
        code, report, stderr = graded.code, graded.report, graded.stderr
    except Exception as exc:  # noqa: BLE001 - a grade that could not be read is a result too
        code, report, stderr = -1, {"status": "harness-error", "message": f"{type(exc).__name__}: {exc}",
                                    "checks": []}, ""
    wall = time.perf_counter() - start
    return {**asdict(job), "drill": is_drill(job.exercise), "path": "cold" if job.cold else "warm",
            "code": code, "wall_s": round(wall, 3), "status": report.get("status"), "report": report,
            "stderr_tail": stderr[-2000:] if stderr else ""}


def default_workers() -> int:
    if os.environ.get(WORKERS_ENV):
        return max(1, int(os.environ[WORKERS_ENV]))
    return max(2, min(8, (os.cpu_count() or 2) // 2))


def not_run(job: Job, why: str) -> dict:
    return {**asdict(job), "drill": is_drill(job.exercise), "path": "cold" if job.cold else "warm", "code": None,
            "wall_s": None, "status": "not-run", "report": {"status": "not-run", "message": why, "checks": []},
            "stderr_tail": ""}


def grade_all(todo: list[Job], *, workers: int | None = None, deadline: float | None = None,
              parallel_env: dict | None = None, on_result=None) -> list[dict]:
    """Grade every job: the cold CUDA references alone first (clean wall times), then the rest in parallel,
    each buggy file's grades side by side, with `parallel_env` added to the environment (e.g. one torch
    thread per grade). A job not started by `deadline` (time.monotonic()) is recorded as not run."""
    workers = workers or default_workers()
    alone = [j for j in todo if j.kind == "reference" and j.device == "cuda"]
    rest = sorted((j for j in todo if j not in alone), key=lambda j: (j.kind == "buggy", j.file, j.device))

    def one(job: Job) -> dict:
        if deadline is not None and time.monotonic() > deadline:
            return not_run(job, "not graded: the run's time budget was spent")
        return run(job)

    results = []
    for job in alone:
        results.append(one(job))
        if on_result:
            on_result(results[-1], False)
    os.environ.update(parallel_env or {})
    if any(not j.cold for j in rest):
        from warmutil import grader

        grader().start()  # once, before the threads: they share one zygote
    if rest:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(one, rest):
                results.append(result)
                if on_result:
                    on_result(result, True)
    return results


def key(result: dict) -> tuple[str, str, str]:
    return result["kind"], result["file"], result["device"]


_graded: dict = {}


def ensure(todo: list[Job]) -> dict:
    """Results by (kind, file, device): read from QUIZAPP_CUDA_GRADES when it names a file of
    benchmarks/gpu/grade_all.py's, graded now for whatever it lacks; kept for the rest of the pytest run."""
    path = os.environ.get(GRADES_ENV)
    if path and Path(path).is_file() and not _graded:
        for result in json.loads(Path(path).read_text(encoding="utf-8")).get("grades", []):
            _graded[key(result)] = result
    missing = [j for j in todo if (j.kind, j.file, j.device) not in _graded]
    if missing and os.environ.get(ONLY_CACHED_ENV):
        for job in missing:
            _graded[(job.kind, job.file, job.device)] = not_run(job, f"not in {path} ({ONLY_CACHED_ENV} is set)")
        missing = []
    for result in grade_all(missing):
        _graded[key(result)] = result
    return _graded


# -- reading a report ------------------------------------------------------------------------------

def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report.get("checks", [])}


def messages(report: dict) -> dict[str, str]:
    return {c["id"]: c.get("message", "") for c in report.get("checks", [])}


def not_passing(report: dict) -> set[str]:
    return {cid for cid, status in statuses(report).items() if status in ("fail", "error")}


def expected_on_cuda(cpu_report: dict) -> tuple[set[str], set[str]]:
    """(must, may): the checks a solution must fail or error on CUDA, and those it may, from its CPU
    report. The same ones, both; except for a loop that turns AMP off off-CUDA (a CPU message says "this
    grade ran on CPU"): on CUDA it runs AMP, so the checks that say so must pass, and the others that
    failed on the CPU (as consequences) may pass too."""
    said = messages(cpu_report)
    failing = not_passing(cpu_report)
    gated = {cid for cid in failing if CPU_ONLY_FAILURE in said.get(cid, "")}
    if gated:
        return set(), failing - gated
    return failing, failing


def verdicts_differ(cpu_report: dict, cuda_report: dict) -> tuple[dict, dict]:
    """({check: CUDA's message} for checks failing on CUDA only, {check: CPU's message} for checks CUDA
    should have failed and passed); both empty when CUDA judged as the CPU led one to expect. Checks the
    CPU skipped are left out."""
    skips = skipped(cpu_report)
    must, may = expected_on_cuda(cpu_report)
    seen = not_passing(cuda_report) - skips
    cuda_said, cpu_said = messages(cuda_report), messages(cpu_report)
    return ({cid: cuda_said[cid] for cid in sorted(seen - (may - skips))},
            {cid: cpu_said[cid] for cid in sorted((must - skips) - seen)})


def skipped(report: dict) -> set[str]:
    return {cid for cid, status in statuses(report).items() if status == "skip"}
