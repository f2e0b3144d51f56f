"""Progress export and import, and the Anki export, on a store with a year of heavy study.

Fills a temporary store with a synthetic history (every shipped question reviewed every few days
for a year, plus grades and interviews), then times `export json`, an import into an empty store
(every card replayed), a second import of the same file (nothing new), and `export anki`.

    python benchmarks/transfer.py [--days 365]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from quizapp.bank import load_bank
from quizapp.export.anki import write_apkg
from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.study.transfer import import_progress, read_export, write_export


def fill(store: Store, bank, days: int, rng: random.Random) -> None:
    start = datetime(2025, 1, 1, 8, tzinfo=timezone.utc)
    for question in bank.questions.values():
        at = start + timedelta(hours=rng.randrange(48))
        while at < start + timedelta(days=days):
            rating = rng.choice((1, 3, 3, 3, 4))
            record_review(store, question, rating=rating, correct=rating > 1, now=at)
            at += timedelta(days=rng.randint(1, 9), hours=rng.randrange(24))
    for n in range(days // 3):
        at = start + timedelta(days=3 * n)
        store.record_grade("amp_training", status="pass", checks_passed=8, checks_total=8, at=at,
                           report={"status": "pass", "checks": [{"id": "x", "status": "pass"}] * 8})
    for n in range(days // 14):
        at = start + timedelta(days=14 * n)
        store.record_interview(started_at=at, finished_at=at + timedelta(minutes=30), minutes=30, score=0.5,
                               report={"topics": {slug: 0.5 for slug in bank.topics}})


def timed(label: str, work):
    begin = time.perf_counter()
    result = work()
    print(f"{label:<34} {time.perf_counter() - begin:7.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args()
    bank = load_bank()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with Store.open(folder / "a.sqlite3") as store:
            timed("fill (synthetic history)", lambda: fill(store, bank, args.days, random.Random(0)))
            answers = store.answer_count()
            document = timed("export json", lambda: write_export(store, folder / "p.json"))
        size_mb = (folder / "p.json").stat().st_size / 1e6
        print(f"  {answers} answers, {len(document['grades'])} grades, {len(document['interviews'])} interviews, "
              f"{size_mb:.1f} MB")
        with Store.open(folder / "b.sqlite3") as store:
            parsed = timed("read + check the file", lambda: read_export(folder / "p.json"))
            summary = timed("import into an empty store", lambda: import_progress(store, parsed))
            print(f"  {summary.answers} answers added, {summary.cards} cards replayed")
            again = timed("import the same file again", lambda: import_progress(store, parsed))
            assert not again.changed
        notes = timed("export anki (shipped bank)", lambda: write_apkg(bank, folder / "q.apkg")).notes
        print(f"  {notes} notes, {(folder / 'q.apkg').stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
