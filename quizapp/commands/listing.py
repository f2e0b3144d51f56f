"""`quizapp list`: topics and exercises with the learner's status."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.study.stats import compute_stats


def list_exercises() -> int:
    store = open_store()
    if store is None:
        return 1
    with store:
        bank = load_bank_reporting()
        from quizapp.catalog import load_catalog

        catalog = load_catalog()
        stats = compute_stats(bank.outline(), store, exercise_ids=tuple(catalog))
    console = Console()
    topics = Table(title="Question topics", title_justify="left")
    for name, justify in (("topic", "left"), ("title", "left"), ("questions", "right"),
                          ("seen", "right"), ("due", "right")):
        topics.add_column(name, justify=justify)
    for t in stats.topics:
        topics.add_row(t.slug, t.title, str(t.questions), str(t.seen), str(t.due))
    console.print(topics)
    if catalog:
        from quizapp.study.path import next_exercise

        upcoming = next_exercise(catalog, stats)
        table = Table(title="Exercises", title_justify="left")
        for name in ("exercise", "title", "status", "best"):
            table.add_column(name)
        for row in stats.exercises:
            info = catalog.get(row.exercise_id)
            status = "passed" if row.passed else ("attempted" if row.attempts else "not started")
            style = {"passed": "green", "attempted": "yellow"}.get(status, "dim")
            best = f"{row.best_passed}/{row.best_total}" if row.attempts else "-"
            if upcoming is not None and row.exercise_id == upcoming.id:
                status += " · next"
                style = "bold cyan"
            table.add_row(row.exercise_id, info.title if info else "(no longer shipped)",
                          f"[{style}]{status}[/]", best)
        console.print(table)
        if upcoming is not None:
            console.print(f"Next on your path: {upcoming.id} (quizapp start {upcoming.id}); the weakest topic first, "
                          "then the easiest.", highlight=False)
    return 0
