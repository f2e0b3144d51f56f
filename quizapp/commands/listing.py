"""`quizapp list`: topics and exercises with the learner's status."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from quizapp.catalog import is_drill_id
from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.study.stats import compute_stats


def exercise_table(title: str, ids: list[str], rows: dict, catalog: dict, upcoming, *, drills: bool = False) -> Table:
    """One row per exercise (or drill): status, best result; a drill also names its symptom."""
    table = Table(title=title, title_justify="left")
    for name in ("drill" if drills else "exercise", "title", "status", "best"):
        table.add_column(name)
    if drills:
        table.add_column("symptom")
    for exercise_id in ids:
        row, info = rows[exercise_id], catalog.get(exercise_id)
        status = "passed" if row.passed else ("attempted" if row.attempts else "not started")
        style = {"passed": "green", "attempted": "yellow"}.get(status, "dim")
        best = f"{row.best_passed}/{row.best_total}" if row.attempts else "-"
        if upcoming is not None and exercise_id == upcoming.id:
            status += " · next"
            style = "bold cyan"
        cells = [exercise_id, info.list_title if info else "(no longer shipped)",
                 f"[{style}]{status}[/]", best]
        if drills:
            cells.append(info.symptom if info else "")
        table.add_row(*cells)
    return table


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
        rows = {row.exercise_id: row for row in stats.exercises}
        exercises = [i for i in rows if not is_drill_id(i)]
        drills = [i for i in rows if is_drill_id(i)]
        if exercises:
            console.print(exercise_table("Exercises", exercises, rows, catalog, upcoming))
        if drills:
            console.print(exercise_table("Debugging drills: fix a broken training script from a real bug report",
                                         drills, rows, catalog, upcoming, drills=True))
        if upcoming is not None:
            console.print(f"Next on your path: {upcoming.id} (quizapp start {upcoming.id}); the exercises first, then "
                          "the drills, each in your weakest topic first, then the easiest.", highlight=False)
    return 0
