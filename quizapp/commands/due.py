"""`quizapp due [--json]`: what is due now and next, questions and exercises."""

from __future__ import annotations

import json
from datetime import datetime

import click
from rich.console import Console
from rich.table import Table

from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.study.due import DuePlan, asked_words, due_plan
from quizapp.study.schedule import format_interval
from quizapp.study.store import utcnow
from quizapp.words import plural

SHOWN = 12  # rows of questions in the table; --json lists them all


def when(due: datetime, now: datetime) -> str:
    return "now" if due <= now else f"in {format_interval(due - now)}"


def show_due(as_json: bool) -> int:
    store = open_store()
    if store is None:
        return 1
    with store:
        from quizapp.catalog import load_catalog

        bank = load_bank_reporting()
        plan = due_plan(store, {q.id: q.topic for q in bank.questions.values()}, load_catalog(), utcnow())
        from quizapp.study.limits import new_today
        from quizapp.study.stats import compute_stats

        today = new_today(store, plan.now)
        unseen = compute_stats(bank.outline(), store, now=plan.now).new
    if as_json:
        document = plan.to_json()
        # Added keys (the contract grows only by adding): what is left of the daily new-question limit.
        document["new_today"] = {"limit": today.limit, "taken": today.taken, "left": min(today.left, unseen)}
        # How many are due now, with the share failed checks asked for: the figures every screen shows.
        count = plan.due_now()
        document["due_now"] = {"questions": count.questions, "asked_by_checks": count.asked,
                               "exercises": len(plan.exercises_due())}
        click.echo(json.dumps(document))
        return 0
    print_plan(plan)
    Console().print(f"[bold]New today[/]: {min(today.left, unseen)} left of your daily {today.limit} "
                    f"({today.taken} started today; {plural(unseen, 'question')} not yet seen; "
                    "`quizapp config new-per-day N` changes the limit)", highlight=False)
    return 0


def print_plan(plan: DuePlan) -> None:
    console = Console()
    now = plan.now
    count = plan.due_now()
    console.print(f"[bold]Due now[/]: {plural(count.questions, 'question')}{asked_words(count.asked)}, "
                  f"{plural(len(plan.exercises_due()), 'exercise')}", highlight=False)
    if plan.exercises:
        table = Table(title="Exercises", title_justify="left")
        table.add_column("exercise")
        table.add_column("due")
        for e in plan.exercises:
            table.add_row(e.id, when(e.due, now))
        console.print(table)
    else:
        console.print("No exercise is scheduled yet: an exercise comes back on the schedule once you pass it.")
    if plan.questions:
        table = Table(title="Questions", title_justify="left")
        for name in ("question", "topic", "due", "why"):
            table.add_column(name)
        for q in plan.questions[:SHOWN]:
            table.add_row(q.id, q.topic, when(q.due, now), f"a failed check of {q.asked_by}" if q.asked_by else "")
        console.print(table)
        if len(plan.questions) > SHOWN:
            console.print(f"... and {plural(len(plan.questions) - SHOWN, 'more question')} (quizapp due --json lists all)")
    if plan.retired:
        console.print(f"[dim]Kept, not scheduled: history of {', '.join(plan.retired)} (no longer shipped).[/]")
