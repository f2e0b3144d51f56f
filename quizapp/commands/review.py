"""`quizapp review`: study due and new questions in the terminal, without the TUI."""

from __future__ import annotations

import random
import sqlite3
import string
import time
from datetime import datetime

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from quizapp.bank import Question, check_answer
from quizapp.bank.answers import numeric_problem
from quizapp.bank.shuffle import choice_order, why_not_lines, why_not_markdown
from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.study.keypoints import parse_ticks, rating_from_key_points
from quizapp.study.queue import requeue_again, study_queue
from quizapp.study.schedule import RATING_NAMES, default_rating, format_interval, preview, record_review
from quizapp.study.store import BUSY_TIMEOUT_S, StoreError, utcnow
from quizapp.words import plural

QUIT = "q"


class Quit(Exception):
    """The learner ended the session (q, Ctrl+D or Ctrl+C)."""


def ask(text: str, default: str | None = None) -> str:
    try:
        reply = click.prompt(text, default=default, show_default=bool(default), prompt_suffix=": ")
    except click.Abort:
        raise Quit from None
    if reply.strip().lower() == QUIT:
        raise Quit
    return reply


def read_answer(q: Question, console: Console, seed: str = ""):
    """Prompt until the reply can be checked; returns the response in check_answer's terms.

    Choices are shown shuffled (seeded by question and `seed`); the response is in file order.
    """
    if q.type in ("single", "multi"):
        order = choice_order(q, seed)
        for i, index in enumerate(order, 1):
            console.print(f"  [bold]{i}.[/] {q.choices[index]}", highlight=False)
        many = q.type == "multi"
        while True:
            reply = ask("Your answers (numbers, e.g. 1 3)" if many else "Your answer (number)")
            parts = reply.replace(",", " ").split()
            if parts and all(p.isdecimal() and 1 <= int(p) <= len(q.choices) for p in parts) and (many or len(parts) == 1):
                picks = sorted({order[int(p) - 1] for p in parts})
                return picks if many else picks[0]
            console.print(f"[yellow]Type {'numbers' if many else 'a number'} from 1 to {len(q.choices)}.[/]")
    if q.type == "numeric":
        while True:
            reply = ask("Your answer (a number)")
            problem = numeric_problem(reply)  # the checker's own rule: what passes here is checked
            if problem is None:
                return reply
            console.print(f"[yellow]{escape(problem)}[/]")
    if q.type == "text":
        return ask("Your answer")
    if q.type == "order":
        shown = list(range(len(q.items)))
        random.shuffle(shown)
        letters = string.ascii_uppercase[: len(shown)]
        for letter, index in zip(letters, shown):
            console.print(f"  [bold]{letter}.[/] {q.items[index]}", highlight=False)
        while True:
            reply = "".join(ask(f"Their right order, as letters (e.g. {letters[::-1]})").upper().split())
            if sorted(reply) == sorted(letters):
                return [shown[letters.index(ch)] for ch in reply]
            console.print(f"[yellow]Use each of the letters {letters} once.[/]")
    ask("Answer in your head (or type it), then press Enter for the model answer", default="")
    return None


def read_key_points(q: Question, console: Console) -> list[int]:
    """List a card's key points and ask which the answer covered; 0-based indices."""
    console.print("[bold]Key points[/] (which did your answer cover?)")
    for i, point in enumerate(q.key_points, 1):
        console.print(f"  [bold]{i}.[/] {point}", highlight=False)
    while True:
        ticks = parse_ticks(ask("Covered (numbers, e.g. 1 3; Enter for none)", default=""), len(q.key_points))
        if ticks is not None:
            return ticks
        console.print(f"[yellow]Type numbers from 1 to {len(q.key_points)}, or press Enter for none.[/]")


def read_rating(suggested: int, card_json: str | None) -> int:
    shown = "  ".join(f"{r} {name} ({format_interval(d)})" for (r, name), d in
                      zip(RATING_NAMES.items(), preview(card_json).values()))
    click.echo(shown)
    while True:
        reply = ask("Rating", default=str(suggested)).strip()
        if reply in {"1", "2", "3", "4"}:
            return int(reply)
        click.echo("Type 1, 2, 3 or 4 (Enter keeps the suggestion).")


class NotSaved(Exception):
    """The store refused an answer and the learner chose not to try again: the session ends."""


def save_review(q: Question, store, console: Console, **review) -> datetime:
    """record_review, offering to try again while the store refuses (another process holding the
    write lock past the store's busy timeout, a full disk); NotSaved when the learner gives up."""
    review.setdefault("now", utcnow())  # a retry saves the answer at the moment it was given
    while True:
        try:
            return record_review(store, q, **review)
        except (sqlite3.Error, StoreError) as exc:
            reason = str(exc)
            if isinstance(exc, sqlite3.Error):
                if "locked" in reason.lower() or "busy" in reason.lower():
                    reason = (f"another process (the app, a grade, `watch`) held the progress database's write "
                              f"lock for over {BUSY_TIMEOUT_S:g} s")
                reason += f"\n  database: {store.path}"
            console.print(f"[bold red]Your answer was not saved:[/] {escape(reason)}")
            try:
                again = click.confirm("Try saving it again?", default=True)
            except click.Abort:  # Ctrl+D or Ctrl+C: no
                again = False
            if not again:
                raise NotSaved(q.id) from None


def study_one(q: Question, store, console: Console, seed: str) -> tuple[int, bool | None, bool]:
    """Ask, check, explain, rate and save one question: (rating, correct, stop).

    stop: the learner quit at the rating prompt. An answer already checked (or a card already
    revealed) is then saved with the suggested rating, as the session promises and as the app does
    on leaving. Quit before that point propagates unchanged. NotSaved: the store refused the answer
    and the learner chose not to try again.
    """
    console.print(Markdown(q.prompt))
    started = time.monotonic()
    response = read_answer(q, console, seed)
    verdict = check_answer(q, response)
    if verdict.correct is True:
        console.print("[bold green]✔ Right[/]")
    elif verdict.correct is False:
        console.print(f"[bold red]✘ Not quite.[/] The answer: {verdict.expected}")
    picked, others = why_not_lines(q, response)
    if picked:
        console.print(Markdown(why_not_markdown(picked, "Why not")))
    console.print(Markdown(q.explanation))
    if others:
        heading = "The other wrong choices" if picked else "Why the other choices are wrong"
        console.print(Markdown(why_not_markdown(others, heading)))
    suggested = default_rating(verdict.correct)
    stop = False
    try:
        if q.key_points:
            covered = read_key_points(q, console)
            suggested = rating_from_key_points(len(covered), len(q.key_points))
            response = {"covered": covered}
        rating = read_rating(suggested, store.card_json(q.id))
    except Quit:
        # As in the app: an answer checked (or a card revealed) is saved with the suggested rating.
        rating, stop = suggested, True
    due = save_review(q, store, console, rating=rating, correct=verdict.correct, response=response,
                      duration_ms=int((time.monotonic() - started) * 1000))
    if stop:
        console.print(f"\nSaved as {RATING_NAMES[rating]} (suggested); stopping.")
    else:
        console.print(f"[dim]Saved; next review {due.astimezone():%Y-%m-%d %H:%M}.[/]")
    return rating, verdict.correct, stop


def run(topic: str | None, limit: int) -> int:
    store = open_store()
    if store is None:
        return 1
    console = Console(highlight=False)
    with store:
        bank = load_bank_reporting()
        if topic is not None and topic not in bank.topics:
            raise click.UsageError(f"no topic '{topic}' (topics: {', '.join(bank.topics)})")
        queue = study_queue(bank, store, topic=topic, limit=limit)
        if not queue:
            console.print("Nothing is due and every question has been seen. Come back later.")
            return 0
        console.print(f"{plural(len(queue), 'question')}. Type q (or Ctrl+D) at any prompt to stop; every answer "
                      "is saved. A question you rate Again comes back later in the session.")
        pending = list(queue)
        reasked: dict[str, int] = {}  # question id -> times put back after Again (see requeue_again)
        answered: set[str] = set()
        asked, repeats, right, checked = 0, 0, 0, 0
        seed = utcnow().isoformat()  # a new shuffle of the choices each session
        lost = None  # the question whose answer the store refused, if the session ended on one
        try:
            while pending:
                q = pending.pop(0)
                asked += 1
                again = q.id in answered
                title = f"{asked}/{asked + len(pending)} · {bank.topics[q.topic].title} · {q.type}"
                console.rule(f"{title} · difficulty {q.difficulty}" + (" · again" if again else ""))
                rating, correct, stop = study_one(q, store, console, seed)
                if again:
                    repeats += 1
                else:  # the score counts first tries; a re-ask follows the answer just shown
                    answered.add(q.id)
                    if correct is not None:
                        checked += 1
                        right += correct
                if stop:
                    break
                if requeue_again(pending, q, rating, reasked):
                    console.print("[dim]Rated Again: it comes back later in this session.[/]")
        except Quit:
            console.print()
        except NotSaved as exc:
            lost = exc.args[0]
            console.print(f"[bold red]Not saved:[/] your last answer (to {escape(lost)}) was not kept; every "
                          "answer before it was. The session ends here; run `quizapp review` again later.")
        summary = f"Answered {len(answered)} of {len(queue)}"
        if checked:
            summary += f"; {right} of {checked} checked answers right ({right / checked:.0%})"
        if repeats:
            summary += f"; {plural(repeats, 're-ask')} after Again"
        console.print(summary + ".")
    return 1 if lost else 0
