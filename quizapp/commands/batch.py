"""`quizapp batch`: grade a class's submissions (grading.batch), with a progress bar, a summary, and
the shards of a cluster job merged into one table.

Exit codes: 0 the batch ran to its end (whatever the students' verdicts), 1 it was stopped before
(Ctrl+C, SIGTERM: what was graded is kept, and a rerun goes on from there), 2 it could not start.
"""

from __future__ import annotations

import os
import textwrap
import threading
from collections import Counter
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from quizapp.catalog import load_catalog
from quizapp.grading.batch import (
    RESULTS_CSV,
    Batch,
    BatchError,
    Outcome,
    check_places,
    find_submissions,
    merge,
    parse_shard,
    read_result,
    result_path,
    shard_of,
    summary,
    write_csv,
)
from quizapp.grading.processes import STOP_SIGNALS, signals_set
from quizapp.words import plural

CHECKS_SHOWN = 6  # the summary's most failed checks: one line each, to fit a terminal


def default_out(submissions: Path, exercise_id: str) -> Path:
    """Beside the submissions, never inside: `hw3/` gives `hw3-lora-results/`."""
    folder = submissions.resolve()
    return folder.parent / f"{folder.name}-{exercise_id}-results"


def batch(submissions: Path, exercise_id: str | None, jobs: int | None, out: Path | None, csv_file: Path | None,
          regrade: bool, shard: str | None, device: str, timeout: float) -> int:
    err = Console(stderr=True, highlight=False)
    catalog = load_catalog()
    try:
        if exercise_id is None:
            raise BatchError("say which exercise the submissions solve: --exercise ID "
                             f"(one of: {', '.join(sorted(catalog))})")
        if exercise_id not in catalog:
            raise BatchError(f"unknown exercise '{exercise_id}' (known: {', '.join(sorted(catalog))})")
        out = out or default_out(submissions, exercise_id)
        check_places(submissions, out)
        found = find_submissions(submissions, exercise_id)
        part = parse_shard(shard) if shard else None
    except BatchError as exc:
        click.echo(f"quizapp batch: {exc}", err=True)
        return 2
    mine = [s for s in found if part is None or shard_of(s.student, part[1]) == part[0]]
    if csv_file is None:
        csv_file = out / (RESULTS_CSV if part is None else f"results-shard-{part[0]}-of-{part[1]}.csv")
    jobs = jobs or os.cpu_count() or 1
    run = Batch(catalog[exercise_id], submissions, mine, out, jobs=jobs, device=device, timeout=timeout,
                regrade=regrade, hide=(csv_file.resolve(),))
    todo, kept = run.pending()
    where = f"shard {part[0]}/{part[1]}: {len(mine)} of {len(found)} students" if part else \
        f"{plural(len(found), 'student')}"
    click.echo(f"Batch of '{exercise_id}' in {submissions} ({where}) -> {out}", err=True)
    again = " (--regrade grades them again)" if kept else ""
    click.echo(f"  {plural(len(todo), 'submission')} to grade, {len(kept)} graded already{again}; "
              f"{plural(min(jobs, max(len(todo), 1)), 'worker')}, device {device}", err=True)
    click.echo(f"  {run.confinement}", err=True)
    outcomes = list(kept)
    stopped = False
    if todo:
        stopped = not _grade_with_progress(run, todo, outcomes, err)
    results = [d for d in (read_result(result_path(out, s.student)) for s in mine) if d is not None]
    write_csv(csv_file, results)
    _print_summary(results, Console(highlight=False))
    click.echo(f"Results: {out}/ (a JSON per student) and {csv_file}")
    if stopped:
        left = len(mine) - len(results)
        click.echo(f"quizapp batch: stopped; {plural(len(results), 'student')} graded, {left} left. "
                  "Run the same command again to go on.", err=True)
        return 1
    return 0


def _grade_with_progress(run: Batch, todo, outcomes: list[Outcome], err: Console) -> bool:
    """Grade with a progress bar; False when stopped before the end."""
    counts: Counter = Counter(o.status for o in outcomes)
    columns = [TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
               TextColumn("[green]{task.fields[passed]} pass[/] [red]{task.fields[failed]} fail[/] "
                          "[yellow]{task.fields[errors]} error[/]"),
               TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn()]
    with signals_set(run.cancel, STOP_SIGNALS), Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("grading", total=len(todo), passed=counts["pass"], failed=counts["fail"],
                                 errors=counts["error"])

        def done(outcome: Outcome) -> None:
            counts[outcome.status] += 1
            outcomes.append(outcome)
            progress.update(task, advance=1, passed=counts["pass"], failed=counts["fail"], errors=counts["error"])

        # The pool runs in a thread so that this one stays free for the signal that stops it.
        worker = threading.Thread(target=run.run, args=(todo, done), name="quizapp-batch-pool")
        worker.start()
        while worker.is_alive():
            worker.join(timeout=0.2)
        return not run.cancel.is_set()


def _print_summary(results: list[dict], out: Console) -> None:
    if not results:
        out.print("No results yet.")
        return
    s = summary(results)
    rate = 100 * s["passed"] / s["students"]
    out.print(f"Passed: {s['passed']} of {plural(s['students'], 'student')} ({rate:.0f}%); "
              f"failed {s['failed']}, errors {s['errors']} (a submission that could not be graded, or crashed).",
              markup=False)
    if not s["checks"]:
        return
    shown = s["checks"][:CHECKS_SHOWN]
    out.print(f"The checks failed most often ({len(shown)} of {len(s['checks'])}), with the message most "
              "students got:", markup=False)
    width = max(60, out.width)
    for entry in shown:
        # Two lines each: the check and the start of its message, then the rest of what fits.
        head = f"{entry['count']:>5}  {entry['id']}: "
        lines = textwrap.wrap(" ".join((entry["message"] or "").split()), width=width - 7,
                              initial_indent=" " * (len(head) - 7), max_lines=2, placeholder=" …")
        lines = lines or [""]
        out.print(head + lines[0][len(head) - 7:], markup=False, soft_wrap=True)
        for line in lines[1:]:
            out.print(" " * 7 + line, markup=False, soft_wrap=True)


def merge_shards(folders: tuple[Path, ...], csv_file: Path | None) -> int:
    try:
        if not folders:
            raise BatchError("--merge takes the shards' output folders: quizapp batch --merge DIR...")
        results, warnings = merge(list(folders))
    except BatchError as exc:
        click.echo(f"quizapp batch: {exc}", err=True)
        return 2
    for warning in warnings:
        click.echo(f"quizapp batch: {warning}", err=True)
    csv_file = csv_file or Path(RESULTS_CSV)
    write_csv(csv_file, results)
    _print_summary(results, Console(highlight=False))
    click.echo(f"Merged {plural(len(results), 'student')} from {plural(len(folders), 'folder')} into {csv_file}")
    return 0
