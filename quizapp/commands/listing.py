"""`quizapp list`: topics and exercises with the learner's status."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from quizapp.catalog import is_drill_id
from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.study.stats import compute_stats


def narrow_style(width: int) -> dict:
    """Below 80 columns the tables drop their frame (three columns of borders are room for a title)."""
    return {"box": box.SIMPLE_HEAD, "pad_edge": False} if width < 80 else {}


# Below this width a drill's symptom goes under its title instead of in a column of its own.
SYMPTOM_COLUMN_FROM = 110


def exercise_table(title: str, ids: list[str], rows: dict, catalog: dict, upcoming, *, drills: bool = False,
                   width: int = 80) -> Table:
    """One row per exercise (or drill): status, best result; a drill also names its symptom. Ids are
    never cut or wrapped: the learner types them (`quizapp start ID`); the titles wrap instead."""
    table = Table(title=title, title_justify="left", **narrow_style(width))
    table.add_column("drill" if drills else "exercise", no_wrap=True, min_width=max(map(len, ids), default=8))
    narrow = width < 80  # the best result goes under the status: one column fewer
    table.add_column("title", ratio=1, min_width=10)
    table.add_column("status", max_width=11 if narrow else None)
    if not narrow:
        table.add_column("best", no_wrap=True)
    symptom_column = drills and width >= SYMPTOM_COLUMN_FROM
    if symptom_column:
        table.add_column("symptom", ratio=1)
    for exercise_id in ids:
        row, info = rows[exercise_id], catalog.get(exercise_id)
        status = "passed" if row.passed else ("attempted" if row.attempts else "not started")
        style = {"passed": "green", "attempted": "yellow"}.get(status, "dim")
        best = f"{row.best_passed}/{row.best_total}" if row.attempts else "-"
        if upcoming is not None and exercise_id == upcoming.id:
            status += " · next"
            style = "bold cyan"
        shown_title = Text(info.list_title if info else "(no longer shipped)")
        if drills and info and info.symptom and not symptom_column:
            shown_title.append(f"\n{info.symptom}", style="dim")
        shown_status = Text(status, style=style)
        if narrow and row.attempts:
            shown_status.append(f"\nbest {best}", style="dim")
        cells = [exercise_id, shown_title, shown_status] + ([] if narrow else [best])
        if symptom_column:
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
    topics = Table(title="Question topics", title_justify="left", **narrow_style(console.width))
    # The slug is what `--topic SLUG` takes: never cut, like an exercise's id.
    topics.add_column("topic", no_wrap=True, min_width=max((len(t.slug) for t in stats.topics), default=5))
    topics.add_column("title", ratio=1, min_width=10)
    topics.add_column("seen", justify="right", no_wrap=True)  # "3/18": seen of the topic's questions
    topics.add_column("due", justify="right", no_wrap=True)
    for t in stats.topics:
        topics.add_row(t.slug, t.title, f"{t.seen}/{t.questions}", str(t.due))
    console.print(topics)
    if catalog:
        from quizapp.study.path import next_exercise

        upcoming = next_exercise(catalog, stats)
        rows = {row.exercise_id: row for row in stats.exercises}
        exercises = [i for i in rows if not is_drill_id(i)]
        drills = [i for i in rows if is_drill_id(i)]
        if exercises:
            console.print(exercise_table("Exercises", exercises, rows, catalog, upcoming, width=console.width))
        if drills:
            console.print(exercise_table("Debugging drills: fix a broken training script from a real bug report",
                                         drills, rows, catalog, upcoming, drills=True, width=console.width))
        if upcoming is not None:
            console.print(f"Next on your path: {upcoming.id} (quizapp start {upcoming.id}); the exercises first, then "
                          "the drills, each in your weakest topic first, then the easiest.", highlight=False)
    return 0
