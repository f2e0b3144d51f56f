"""A class graded with `quizapp batch --jobs 2` beside the same files graded one `quizapp grade` at a
time, cold, in one run: the speed-up, and whether every verdict (the grade's status and each check's)
is the same both ways.

Two classes, each graded both ways:
- 40 submissions, the reference and buggy solutions of four exercises (10 each, in name order): four
  batches, each paying for its warm graders' start (a torch import);
- 40 submissions of one exercise (early_stopping: its reference and 39 buggy solutions): one batch.
With --hostile, the test suite's hostile solutions too, by exercise.

    python benchmarks/batch_grade.py [--jobs 2] [--per-exercise 10] [--hostile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ("label_smoothing", "lora", "warmup_cosine", "fake_quant")
HOSTILE = ROOT / "tests" / "grader" / "hostile"


def quizapp(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quizapp", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=False)


def verdict(report: dict) -> tuple:
    return report.get("status"), tuple((c.get("id"), c.get("status")) for c in report.get("checks") or ())


def marker(path: Path) -> str | None:
    for line in path.read_text(errors="replace").splitlines()[:20]:
        if "quizapp: exercise=" in line:
            return line.split("exercise=", 1)[1].split()[0]
    return None


def classes(per_exercise: int, hostile: bool) -> dict[str, list[Path]]:
    """exercise id -> its submissions."""
    chosen: dict[str, list[Path]] = {}
    for exercise in EXERCISES:
        buggy = sorted((ROOT / "tests" / "grader" / "buggy" / exercise).glob("*.py"))
        chosen[exercise] = [ROOT / "exercises" / exercise / "reference.py", *buggy][:per_exercise]
    chosen["one class:early_stopping"] = [ROOT / "exercises" / "early_stopping" / "reference.py",
                                          *sorted((ROOT / "tests" / "grader" / "buggy" / "early_stopping")
                                                  .glob("*.py"))][:40]
    if hostile:
        for path in sorted(HOSTILE.glob("*.py")):
            exercise = marker(path)
            if exercise:
                chosen.setdefault(f"hostile:{exercise}", []).append(path)
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--per-exercise", type=int, default=10)
    parser.add_argument("--hostile", action="store_true", help="also grade the suite's hostile solutions both ways")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="quizapp-bench-batch-"))
    env = dict(os.environ, QUIZAPP_HOME=str(work / "cold-home"))
    env.pop("QUIZAPP_GRADE_WRITABLE", None)
    batch_env = dict(env, QUIZAPP_HOME=str(work / "batch-home"))
    try:
        groups = classes(args.per_exercise, args.hostile)
        print(f"{sum(len(v) for v in groups.values())} submissions; {os.cpu_count()} cores; batch --jobs {args.jobs}")
        totals: dict[str, list[float]] = {}
        differ: list[str] = []
        for group, files in groups.items():
            exercise = group.split(":")[-1]
            folder = work / group.replace(":", "-") / "class"
            folder.mkdir(parents=True)
            for i, path in enumerate(files):
                shutil.copyfile(path, folder / f"s{i:02d}_{path.stem}.py")
            cold: dict[str, tuple] = {}
            start = time.perf_counter()
            for student in sorted(folder.glob("*.py")):
                done = quizapp("grade", str(student), "--exercise", exercise, "--device", "cpu", "--json", env=env)
                try:
                    cold[student.stem] = verdict(json.loads(done.stdout))
                except ValueError:
                    cold[student.stem] = ("no report", ())
            cold_s = time.perf_counter() - start
            out = folder.parent / "results"
            start = time.perf_counter()
            done = quizapp("batch", str(folder), "--exercise", exercise, "--jobs", str(args.jobs), "--out", str(out),
                           env=batch_env)
            batch_s = time.perf_counter() - start
            if done.returncode != 0:
                print(f"  {group}: batch exit code {done.returncode}: {done.stderr.strip()[-300:]}")
            batched = {p.stem: verdict(json.loads(p.read_text())) for p in out.glob("*.json")}
            for student, seen in cold.items():
                if batched.get(student) != seen:
                    differ.append(f"{group}/{student}: cold {seen[0]}, batch {(batched.get(student) or ('none',))[0]}")
            part = "four exercises, 10 each" if group.split(":")[0] in EXERCISES else group.split(":")[0]
            totals.setdefault(part, [0.0, 0.0, 0])
            totals[part][0] += cold_s
            totals[part][1] += batch_s
            totals[part][2] += len(files)
            statuses = [v[0] for v in cold.values()]
            print(f"  {group:<28} {len(files):>3} files  cold {cold_s:6.1f} s  batch {batch_s:5.1f} s  "
                  f"x{cold_s / batch_s:4.1f}  ({statuses.count('pass')} pass, {statuses.count('fail')} fail, "
                  f"{statuses.count('error')} error)")
        for part, (cold_s, batch_s, count) in totals.items():
            print(f"{part} ({count} files): cold {cold_s:.1f} s, batch {batch_s:.1f} s: {cold_s / batch_s:.1f}x faster")
        print("verdicts identical" if not differ else f"{len(differ)} verdicts differ:")
        for line in differ:
            print(f"  {line}")
        stores = list((work / "batch-home").rglob("*")) if (work / "batch-home").exists() else []
        print(f"progress store written by the batches: {'no' if not stores else stores}")
        return 0 if not differ else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
