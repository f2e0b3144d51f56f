"""Cold grade vs warm grade of every exercise's reference on CPU, and `quizapp watch`'s save-to-result
time, each as a ratio to `python -c "import torch"` measured in the same run.

- cold: `quizapp grade REFERENCE --device cpu --json`, a fresh interpreter that imports torch.
- warm: the runner with a warm grader whose zygote is ready: a forked child per grade.
- checks: the checks' own run time inside the warm child (from the child's start event to its
  last check): the floor under any warm grade.
- watch: `quizapp watch amp_training.py --json-lines`: from the file's save to its JSON line.

    python benchmarks/warm_grade.py [--repeat 3] [--exercise ID]...
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quizapp.catalog import load_catalog  # noqa: E402
from quizapp.grading.events import Checked, Started  # noqa: E402
from quizapp.grading.runner import grade  # noqa: E402
from quizapp.grading.warm import WarmGrader  # noqa: E402


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def warm_grade(warm: WarmGrader, exercise) -> tuple[float, float]:
    """(wall time of one warm grade, the checks' own time in it)."""
    marks: dict[str, float] = {}

    def on_event(event) -> None:
        if isinstance(event, Started):
            marks.setdefault("start", time.perf_counter())
        elif isinstance(event, Checked):
            marks["last"] = time.perf_counter()

    start = time.perf_counter()
    report = grade(exercise.reference, exercise, device="cpu", warm=warm, on_event=on_event)
    wall = time.perf_counter() - start
    if report.status != "pass":
        print(f"  warning: {exercise.id}'s reference did not pass warm: {report.message}", file=sys.stderr)
    return wall, marks.get("last", start) - marks.get("start", start)


def next_line(proc: subprocess.Popen, timeout: float) -> dict | None:
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return None
        line = proc.stdout.readline()
    return json.loads(line) if line else None


def watch_save_to_result(exercise, repeat: int, env: dict) -> list[float]:
    folder = Path(tempfile.mkdtemp(prefix="quizapp-watch-bench-"))
    solution = folder / f"{exercise.id}.py"
    text = exercise.reference.read_text()
    solution.write_text(text)
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", str(solution), "--device", "cpu",
                             "--json-lines"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=folder, env=env)
    times = []
    try:
        if next_line(proc, 600) is None:
            raise SystemExit("quizapp watch gave no first grade")
        for i in range(repeat):
            time.sleep(0.5)  # let the watcher settle, as between a learner's saves
            start = time.perf_counter()
            solution.write_text(text + f"\n# save {i}\n")
            if next_line(proc, 600) is None:
                raise SystemExit("quizapp watch gave no grade after a save")
            times.append(time.perf_counter() - start)
    finally:
        proc.send_signal(2)
        proc.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--exercise", action="append", help="only these exercises (default: all)")
    parser.add_argument("--watch-exercise", default="amp_training")
    args = parser.parse_args()
    env = {**os.environ, "QUIZAPP_HOME": tempfile.mkdtemp(prefix="quizapp-bench-")}
    os.environ["QUIZAPP_HOME"] = env["QUIZAPP_HOME"]
    catalog = load_catalog()
    chosen = [catalog[e] for e in (args.exercise or catalog)]
    import_torch = statistics.median(timed([sys.executable, "-c", "import torch"], env) for _ in range(args.repeat))
    print(f"python -c 'import torch': {import_torch:.2f} s (median of {args.repeat})")

    warm = WarmGrader()
    started = time.perf_counter()
    warm.start()
    warm_grade(warm, chosen[0])  # waits for the zygote; not counted
    print(f"zygote ready and first grade: {time.perf_counter() - started:.2f} s (paid once per session)")
    width = max(len("exercise"), *(len(exercise.id) for exercise in chosen))
    print(f"{'exercise':<{width}} {'cold (s)':>9} {'ratio':>6} {'warm (s)':>9} {'ratio':>6} {'checks (s)':>11}")
    for exercise in chosen:
        cmd = [sys.executable, "-m", "quizapp", "grade", str(exercise.reference), "--device", "cpu", "--json"]
        cold = statistics.median(timed(cmd, env) for _ in range(args.repeat))
        runs = [warm_grade(warm, exercise) for _ in range(args.repeat)]
        hot = statistics.median(r[0] for r in runs)
        checks = statistics.median(r[1] for r in runs)
        print(f"{exercise.id:<{width}} {cold:>9.2f} {cold / import_torch:>6.2f} {hot:>9.2f} {hot / import_torch:>6.2f} "
              f"{checks:>11.2f}")
    warm.close()

    watched = catalog[args.watch_exercise]
    times = watch_save_to_result(watched, args.repeat, env)
    median = statistics.median(times)
    print(f"watch {watched.id}: save to result {median:.2f} s (median of {len(times)}), "
          f"ratio {median / import_torch:.2f} to import torch (goal 0.5 or less)")


if __name__ == "__main__":
    main()
