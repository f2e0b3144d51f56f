"""What the kernel containment (bubblewrap) costs a grade: the same reference graded with and without
it, cold, warm and on DDP's two ranks, interleaved in one run so that both sides see the same machine.

- cold: `runner.grade` without a warm grader (a fresh interpreter per grade, inside bwrap's
  namespaces or not: QUIZAPP_NO_BWRAP).
- warm: a warm grader whose zygote is ready (started inside bwrap's namespaces or not), a forked
  child per grade.
- DDP: ddp_accumulation's reference, cold (its two ranks start inside the grade).

Prints the median of each, and the ratio with/without. Needs bwrap installed and usable.

    python benchmarks/containment.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quizapp.catalog import load_catalog  # noqa: E402
from quizapp.grading import contain  # noqa: E402
from quizapp.grading.runner import grade  # noqa: E402
from quizapp.grading.warm import WarmGrader  # noqa: E402

CASES = [("lora", "cold"), ("lora", "warm"), ("label_smoothing", "cold"), ("label_smoothing", "warm"),
         ("ddp_accumulation", "cold")]


def switch(contained: bool) -> None:
    """Grades from now on with bubblewrap's namespaces, or with Landlock alone."""
    if contained:
        os.environ.pop(contain.OFF_ENV, None)
    else:
        os.environ[contain.OFF_ENV] = "1"


def one(exercise: str, way: str, warm: WarmGrader | None) -> float:
    folder = ROOT / "exercises" / exercise
    start = time.perf_counter()
    report = grade(folder / "reference.py", load_catalog()[exercise], device="cpu",
                   warm=warm if way == "warm" else None)
    took = time.perf_counter() - start
    if report.status != "pass":
        raise SystemExit(f"{exercise} ({way}) did not pass: {report.message}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if contain.refused() is not None:
        print(f"bubblewrap cannot be used here: {contain.refused()}")
        return 1
    times: dict[tuple[str, str, bool], list[float]] = {}
    warms = {}
    for contained in (True, False):
        switch(contained)
        warms[contained] = WarmGrader()
        warms[contained].start()
        one("lora", "warm", warms[contained])  # waits for its zygote
    try:
        for _ in range(args.repeat):
            for contained in (True, False):  # interleaved: both sides see the same load
                switch(contained)
                for exercise, way in CASES:
                    times.setdefault((exercise, way, contained), []).append(one(exercise, way, warms[contained]))
    finally:
        for warm in warms.values():
            warm.close()
    print(f"{'grade':<28} {'bubblewrap':>11} {'Landlock only':>14} {'ratio':>7}   (median of {args.repeat}, seconds)")
    for exercise, way in CASES:
        with_ns = statistics.median(times[(exercise, way, True)])
        without = statistics.median(times[(exercise, way, False)])
        print(f"{exercise + ' ' + way:<28} {with_ns:>11.3f} {without:>14.3f} {with_ns / without:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
