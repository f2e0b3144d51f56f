"""Wall time of `quizapp grade` on each exercise's reference, on CPU, next to `python -c "import torch"`.

Prints one row per exercise and the ratio to the torch import measured in the same run
(median of N repetitions each). The goal is a ratio of at most 2.0.

    python benchmarks/grade_vs_import.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "QUIZAPP_HOME": tempfile.mkdtemp(prefix="quizapp-bench-")}
    import_torch = statistics.median(timed([sys.executable, "-c", "import torch"], env) for _ in range(args.repeat))
    print(f"python -c 'import torch': {import_torch:.2f} s (median of {args.repeat})")
    print(f"{'exercise':<20} {'grade (s)':>10} {'ratio':>7}")
    for reference in sorted((ROOT / "exercises").glob("*/reference.py")):
        cmd = [sys.executable, "-m", "quizapp", "grade", str(reference), "--device", "cpu", "--json"]
        seconds = statistics.median(timed(cmd, env) for _ in range(args.repeat))
        print(f"{reference.parent.name:<20} {seconds:>10.2f} {seconds / import_torch:>7.2f}")


if __name__ == "__main__":
    main()
