"""Searching the question bank, as `quizapp search` and the app's bank browser (which searches on
every key typed) do: the shipped bank, and a synthetic one ten times its size. Prints the first
search (which lowers the bank's text once) and medians of N searches per query.

    python benchmarks/search.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bank_load import synthetic_bank  # noqa: E402

from quizapp.bank import load_bank, pack_files  # noqa: E402
from quizapp.bank.search import search  # noqa: E402
from quizapp.paths import shipped_questions_dir  # noqa: E402

QUERIES = ("loss scaling", "bf16", "gradient checkpointing memory", "a", "l", "lo", "los", "zzzz nothing")


def timed(bank, repeat: int) -> tuple[float, float, dict[str, tuple[float, int]]]:
    start = time.perf_counter()
    search(bank, "warm up the index")
    first = time.perf_counter() - start
    per_query = {}
    for query in QUERIES:
        times, found = [], 0
        for _ in range(repeat):
            start = time.perf_counter()
            found = len(search(bank, query))
            times.append(time.perf_counter() - start)
        per_query[query] = (statistics.median(times), found)
    worst = max(seconds for seconds, _ in per_query.values())
    return first, worst, per_query


def report(name: str, bank, repeat: int) -> float:
    first, worst, per_query = timed(bank, repeat)
    print(f"{name}: {len(bank.questions)} questions; first search {first * 1000:.1f} ms (builds the index), "
          f"slowest query median {worst * 1000:.2f} ms")
    for query, (seconds, found) in per_query.items():
        print(f"  {query!r:34} {found:5} hits  {seconds * 1000:6.2f} ms")
    return worst


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    shipped = load_bank(pack_files([shipped_questions_dir()]))
    worst = report("shipped bank", shipped, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        big = load_bank(synthetic_bank(10, Path(folder)))
    report("10x synthetic", big, args.repeat)
    print(f"budget: 100 ms per search of the shipped bank; slowest median {worst * 1000:.2f} ms "
          f"({'within' if worst < 0.1 else 'OVER'} budget)")


if __name__ == "__main__":
    main()
