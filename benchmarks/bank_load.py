"""Loading and validating the question bank: the shipped one, and a synthetic one ten times its size.

The synthetic bank is the shipped files copied ten times with their topic slugs and ids renamed,
so it is validated exactly as the real one is. Prints medians of N loads.

    python benchmarks/bank_load.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from quizapp.bank import load_bank, pack_files
from quizapp.paths import shipped_questions_dir


def synthetic_bank(copies: int, folder: Path) -> list[Path]:
    files = []
    for source in pack_files([shipped_questions_dir()]):
        text = source.read_text(encoding="utf-8")
        for n in range(copies):
            renamed = re.sub(r"^topic: (\S+)", rf"topic: \1-copy{n}", text, flags=re.M)
            renamed = re.sub(r"^(\s*- id: )(\S+)", rf"\1\2-copy{n}", renamed, flags=re.M)
            target = folder / f"{source.stem}-copy{n}.yaml"
            target.write_text(renamed, encoding="utf-8")
            files.append(target)
    return files


def median_load(files: list[Path], repeat: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        bank = load_bank(files)
        times.append(time.perf_counter() - start)
        assert not bank.errors, bank.errors[:3]
        count = len(bank.questions)
    return statistics.median(times), count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    shipped = pack_files([shipped_questions_dir()])
    seconds, count = median_load(shipped, args.repeat)
    print(f"shipped bank: {count} questions in {len(shipped)} files: {seconds * 1000:.0f} ms "
          f"({seconds / count * 1e6:.0f} us per question)")
    with tempfile.TemporaryDirectory() as folder:
        files = synthetic_bank(10, Path(folder))
        seconds10, count10 = median_load(files, args.repeat)
    print(f"10x synthetic: {count10} questions in {len(files)} files: {seconds10 * 1000:.0f} ms "
          f"({seconds10 / count10 * 1e6:.0f} us per question, {seconds10 / seconds:.1f}x the shipped bank's time)")


if __name__ == "__main__":
    main()
