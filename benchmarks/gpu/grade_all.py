"""Grade every exercise's and drill's reference, starter and buggy solutions with `--device cuda` (and
`--device cpu` beside them), timing each grade; write the results as JSON and print a table.

    python benchmarks/gpu/grade_all.py --out grades.json [--devices cuda,cpu] [--workers N] [--budget-s S]
    python benchmarks/gpu/grade_all.py --list      # the matrix found on disk, nothing graded

The matrix and the grading are tests/cuda/matrix.py's, so the CUDA tests and this script grade alike;
tests/cuda/test_cuda_grades.py reads this file's output when QUIZAPP_CUDA_GRADES names it. The CUDA
references are graded one at a time (their wall times are what a learner waits for `quizapp grade`);
everything else runs --workers at a time, so its wall times are under that load. The JSON is rewritten
as results come in: a run stopped early still leaves what it graded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cuda"))

import matrix  # noqa: E402 - found through the path above


def table(results: list[dict]) -> str:
    """Per exercise: the reference's grade time on each device, the starter's, the buggy files' median
    and slowest on each device, and how many buggy files CUDA judged otherwise than the CPU."""
    by = {}
    for r in results:
        by.setdefault(r["exercise"], []).append(r)
    head = ["exercise", "ref cuda s", "ref cpu s", "starter cuda s", "bugs", "bug cuda med/max s",
            "bug cpu med/max s", "differ", "not passing"]
    lines = [head]
    for ex in sorted(by):
        rs = by[ex]

        def wall(kind, device):
            return [r["wall_s"] for r in rs if r["kind"] == kind and r["device"] == device and r["wall_s"] is not None]

        def one(kind, device):
            w = wall(kind, device)
            return f"{w[0]:.1f}" if w else "-"

        def spread(device):
            w = wall("buggy", device)
            return f"{statistics.median(w):.1f}/{max(w):.1f}" if w else "-"

        bugs = sorted({r["file"] for r in rs if r["kind"] == "buggy"})
        differ = sum(1 for f in bugs if verdicts_differ(rs, f))
        failing = [f"{r['kind']}@{r['device']}" for r in rs if r["kind"] == "reference" and r["status"] != "pass"]
        name = ex + (" (drill)" if matrix.is_drill(ex) else "")
        lines.append([name, one("reference", "cuda"), one("reference", "cpu"), one("starter", "cuda"), str(len(bugs)),
                      spread("cuda"), spread("cpu"), str(differ), ", ".join(failing) or "-"])
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                     for row in lines)


def verdicts_differ(results: list[dict], file: str) -> bool:
    """Whether CUDA judged this buggy file otherwise than its CPU grade led one to expect."""
    pair = {r["device"]: r for r in results if r["file"] == file and r["kind"] == "buggy"}
    if set(pair) != {"cuda", "cpu"} or "not-run" in (pair["cuda"]["status"], pair["cpu"]["status"]):
        return False
    only_cuda, only_cpu = matrix.verdicts_differ(pair["cpu"]["report"], pair["cuda"]["report"])
    return bool(only_cuda or only_cpu)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="write the results here (JSON)")
    p.add_argument("--devices", default="cuda,cpu", help="comma-separated: cuda, cpu")
    p.add_argument("--workers", type=int, help="grades at a time after the references (default: cores / 2, 2 to 8)")
    p.add_argument("--threads-per-grade", type=int, default=1,
                   help="OMP_NUM_THREADS of the parallel grades (default 1: the exercises' models are tiny)")
    p.add_argument("--budget-s", type=float, help="start no grade after this many seconds")
    p.add_argument("--limit", type=int, help="grade only the first N jobs (a rehearsal)")
    p.add_argument("--list", action="store_true", help="print the matrix found on disk and grade nothing")
    args = p.parse_args(argv)
    devices = tuple(d for d in args.devices.split(",") if d)
    if not devices or set(devices) - {"cuda", "cpu"}:
        p.error("--devices takes cuda and/or cpu")
    todo = matrix.jobs(devices)
    exercises = matrix.exercise_dirs()
    drills = [d.name for d in exercises if matrix.is_drill(d.name)]
    print(f"matrix: {len(exercises) - len(drills)} exercises ({', '.join(d.name for d in exercises if d.name not in drills)}), "
          f"{len(drills)} drills{' (' + ', '.join(drills) + ')' if drills else ''}; "
          f"{sum(1 for j in todo if j.kind == 'buggy') // max(1, len(devices))} buggy files; "
          f"{len(todo)} grades on {', '.join(devices)}", flush=True)
    if args.list:
        for d in exercises:
            counts = len(matrix.buggy_files(d.name))
            print(f"  {d.name}{' (drill)' if d.name in drills else ''}: reference, "
                  f"{'starter, ' if (d / 'starter.py').is_file() else ''}{counts} buggy")
        return 0
    if args.limit:
        todo = todo[:args.limit]
    start = time.monotonic()
    deadline = start + args.budget_s if args.budget_s else None
    results: list[dict] = []
    meta = {"schema": 1, "devices": list(devices), "workers": args.workers or matrix.default_workers(),
            "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "started": time.strftime("%Y-%m-%dT%H:%M:%S")}

    def save(final: bool = False) -> None:
        if args.out:
            body = {**meta, "elapsed_s": round(time.monotonic() - start, 1), "complete": final, "grades": results}
            tmp = args.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(body, indent=1, default=str) + "\n", encoding="utf-8")
            tmp.replace(args.out)

    def on_result(result: dict, parallel: bool) -> None:
        results.append(result)
        wall = "-" if result["wall_s"] is None else f"{result['wall_s']:.1f}s"
        print(f"  {result['status']:<8} {wall:>7} {result['device']:<4} {result['file']}"
              + ("" if parallel else " (alone)"), flush=True)
        if len(results) % 10 == 0:
            save()

    matrix.grade_all(todo, workers=args.workers, deadline=deadline, on_result=on_result,
                     parallel_env={"OMP_NUM_THREADS": str(args.threads_per_grade)})
    save(final=True)
    print(f"graded {sum(1 for r in results if r['status'] != 'not-run')} of {len(results)} in "
          f"{time.monotonic() - start:.0f} s", flush=True)
    print(table(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
