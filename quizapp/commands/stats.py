"""`quizapp stats`: self-study progress as tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from quizapp.catalog import is_drill_id
from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.commands.due import when
from quizapp.study.due import asked_words
from quizapp.study.stats import LEARNING_MEANING, MASTERY_MEANING, compute_stats
from quizapp.words import plural


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def bar(fraction: float, width: int = 10) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


def passed_counts(rows) -> str:
    """"Exercises passed: 3/13   Drills passed: 1/13", each part only when there is something of its kind."""
    parts = []
    for label, kind in (("Exercises", False), ("Drills", True)):
        mine = [e for e in rows if is_drill_id(e.exercise_id) == kind]
        if mine:
            parts.append(f"[bold]{label} passed[/]: {sum(1 for e in mine if e.passed)}/{len(mine)}")
    return "   ".join(parts)


def show_stats() -> int:
    store = open_store()
    if store is None:
        return 1
    with store:
        bank = load_bank_reporting()
        from quizapp.catalog import load_catalog

        catalog = load_catalog()
        stats = compute_stats(bank.outline(), store, exercise_ids=tuple(catalog))
        from quizapp.study.due import due_plan
        from quizapp.study.store import utcnow

        plan = due_plan(store, {q.id: q.topic for q in bank.questions.values()}, catalog, utcnow())
        from quizapp.study.limits import new_today

        today = new_today(store, plan.now)
        suspended = len(store.suspended_ids())
    console = Console()
    streak = plural(stats.streak_days, "day") + ("" if stats.studied_today or not stats.streak_days else " (study today to keep it)")
    console.print(f"[bold]Streak[/]: {streak}   [bold]Due now[/]: {stats.due}{asked_words(stats.asked)}   "
                  f"[bold]New[/]: {stats.new} ({min(stats.new, today.left)} left today)   "
                  f"[bold]Answers[/]: {stats.attempts}   [bold]Accuracy[/]: {percent(stats.accuracy)}   "
                  + passed_counts(stats.exercises), highlight=False)
    questions = sum(t.questions for t in stats.topics)
    console.print(f"[bold]Mastery[/]: {stats.mastered / questions if questions else 0:.0%}   "
                  f"[bold]On the way[/]: {stats.learning} learning, {stats.mastered} mastered "
                  f"(of {plural(questions, 'question')})", highlight=False)
    table = Table(title="Topics", title_justify="left")
    # Beside mastery, what is on its way to it (a newcomer's mastery stays at 0% for days); the bar
    # only where the terminal leaves the titles room.
    bar_width = 10 if console.width >= 120 else 5 if console.width >= 100 else 0
    for name, justify in (("topic", "left"), ("seen", "right"), ("answers", "right"), ("right", "right"),
                          ("due", "right"), ("mastery", "left"), ("learning", "right"), ("mastered", "right")):
        table.add_column(name, justify=justify)
    for t in stats.topics:
        mastery = f"{bar(t.mastery, bar_width)} {t.mastery:>4.0%}" if bar_width else f"{t.mastery:>7.0%}"
        table.add_row(t.title, f"{t.seen}/{t.questions}", str(t.attempts), percent(t.accuracy), str(t.due),
                      mastery, str(t.learning), str(t.mastered))
    console.print(table)
    console.print(MASTERY_MEANING, style="dim", highlight=False)
    console.print(LEARNING_MEANING, style="dim", highlight=False)
    for title, rows in (("Exercises", [e for e in stats.exercises if not is_drill_id(e.exercise_id)]),
                        ("Debugging drills", [e for e in stats.exercises if is_drill_id(e.exercise_id)])):
        if not rows:
            continue
        ex = Table(title=title, title_justify="left")
        for name in ("drill" if title != "Exercises" else "exercise", "attempts", "best", "last", "review"):
            ex.add_column(name)
        for e in rows:
            state = plan.states.get(e.exercise_id)
            review = "-" if state is None or state.due is None else when(state.due, plan.now)
            ex.add_row(e.exercise_id, str(e.attempts), f"{e.best_passed}/{e.best_total}" if e.attempts else "-",
                       e.last_status or "not started", review)
        console.print(ex)
    if stats.exercises:
        console.print("[dim]An exercise or drill comes back for review once passed: do it again from a fresh starter "
                      "(quizapp due shows when).[/]", highlight=False)
    if plan.retired:
        console.print(f"[dim]Kept, not scheduled: history of {', '.join(plan.retired)} (no longer shipped).[/]")
    if suspended:
        console.print(f"[dim]{plural(suspended, 'question')} suspended (quizapp stats --flags lists them).[/]")
    return 0


def show_flags() -> int:
    """`quizapp stats --flags`: the questions flagged (with the learner's notes), then the suspended ones."""
    from rich.markup import escape

    from quizapp.bank.titles import short_title

    store = open_store()
    if store is None:
        return 1
    with store:
        bank = load_bank_reporting()
        marks = store.marks()
    console = Console(highlight=False)
    flagged = [m for m in marks.values() if m.flagged]
    suspended = [m for m in marks.values() if m.suspended]
    if not flagged and not suspended:
        console.print("No question is flagged or suspended. `quizapp flag ID --note TEXT` flags one; "
                      "`quizapp search WORDS` finds its id.")
        return 0
    for title, rows, empty in (("Flagged", flagged, "No question is flagged."),
                               ("Suspended", suspended, "No question is suspended.")):
        if not rows:
            console.print(empty)
            continue
        table = Table(title=f"{title} ({len(rows)})", title_justify="left")
        topics = {m.question_id: q.topic if (q := bank.questions.get(m.question_id)) else "(no longer in the bank)"
                  for m in rows}
        # Ids are what the learner types next (`quizapp unsuspend ID`, `--topic`): whole, on one
        # line; the note or the prompt gives way.
        table.add_column("question", no_wrap=True, min_width=max(len(m.question_id) for m in rows))
        table.add_column("topic", no_wrap=True, min_width=max(len(topic) for topic in topics.values()))
        table.add_column("since", no_wrap=True)
        table.add_column("note" if title == "Flagged" else "prompt", overflow="fold", ratio=1)
        for m in rows:
            q = bank.questions.get(m.question_id)
            detail = (m.note or "-") if title == "Flagged" else (short_title(q.prompt, 60) if q else "-")
            table.add_row(m.question_id, topics[m.question_id], m.updated_at[:10], escape(detail))
        console.print(table)
    if suspended:
        console.print("[dim]`quizapp unsuspend ID` studies a question again; `quizapp flag ID --clear` takes a "
                      "flag off.[/]")
    return 0
