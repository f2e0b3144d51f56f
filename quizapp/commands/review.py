"""`quizapp review`: study due and new questions in the terminal, without the TUI."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from quizapp.bank import Question
from quizapp.bank.shuffle import choice_order, why_not_lines, why_not_markdown
from quizapp.commands.common import load_bank_reporting, open_store
from quizapp.commands.richtext import QuestionMarkdown, inline_text, numbered
from quizapp.study.keypoints import parse_ticks
from quizapp.study.limits import new_today
from quizapp.study.queue import study_queue
from quizapp.study.schedule import RATING_NAMES, format_interval, preview, record_review
from quizapp.study.session import SAVE_ERRORS, UNDO_ERRORS, Answered, SessionResult, StudySession, reply_problem
from quizapp.study.store import utcnow
from quizapp.words import plural

QUIT = "q"
UNDO = "u"


class Quit(Exception):
    """The learner ended the session (q, Ctrl+D or Ctrl+C)."""


class Undo(Exception):
    """The learner typed u at a question's prompt: take back the rating before it."""


def ask(text: str, default: str | None = None, *, undo: bool = False) -> str:
    try:
        reply = click.prompt(text, default=default, show_default=bool(default), prompt_suffix=": ")
    except click.Abort:
        raise Quit from None
    if reply.strip().lower() == QUIT:
        raise Quit
    if undo and reply.strip().lower() == UNDO:
        raise Undo
    return reply


def read_answer(q: Question, console: Console, seed: str = "", *, can_undo: bool = False):
    """Prompt until the reply can be checked; returns the response in check_answer's terms.

    Choices are shown shuffled (seeded by question and `seed`); the response is in file order.
    `can_undo`: u at these prompts raises Undo (the rating before this question is taken back).
    """
    if can_undo:
        console.print("[dim](u: undo your last rating)[/]")

    def prompt(text: str, default: str | None = None) -> str:
        return ask(text, default, undo=can_undo)

    if q.type in ("single", "multi"):
        order = choice_order(q, seed)
        console.print(numbered(map(str, range(1, len(order) + 1)), [q.choices[i] for i in order]))
        many = q.type == "multi"
        while True:
            reply = prompt("Your answers (numbers, e.g. 1 3)" if many else "Your answer (number)")
            parts = reply.replace(",", " ").split()
            if parts and all(p.isdecimal() and 1 <= int(p) <= len(q.choices) for p in parts) and (many or len(parts) == 1):
                picks = sorted({order[int(p) - 1] for p in parts})
                return picks if many else picks[0]
            console.print(f"[yellow]Type {'numbers' if many else 'a number'} from 1 to {len(q.choices)}.[/]")
    if q.type == "numeric":
        while True:
            reply = prompt("Your answer (a number)")
            problem = reply_problem(q, reply)  # the session's rule, the same in every front end
            if problem is None:
                return reply
            console.print(f"[yellow]{escape(problem)}[/]")
    if q.type == "text":
        return prompt("Your answer")
    if q.type == "order":
        shown = list(range(len(q.items)))
        random.shuffle(shown)
        letters = string.ascii_uppercase[: len(shown)]
        console.print(numbered(letters, [q.items[i] for i in shown]))
        while True:
            reply = "".join(prompt(f"Their right order, as letters (e.g. {letters[::-1]})").upper().split())
            if sorted(reply) == sorted(letters):
                return [shown[letters.index(ch)] for ch in reply]
            console.print(f"[yellow]Use each of the letters {letters} once.[/]")
    prompt("Answer in your head (or type it), then press Enter for the model answer", default="")
    return None


def read_key_points(q: Question, console: Console) -> list[int]:
    """List a card's key points and ask which the answer covered; 0-based indices."""
    console.print("[bold]Key points[/] (which did your answer cover?)")
    console.print(numbered(map(str, range(1, len(q.key_points) + 1)), q.key_points))
    while True:
        ticks = parse_ticks(ask("Covered (numbers, e.g. 1 3; Enter for none)", default=""), len(q.key_points))
        if ticks is not None:
            return ticks
        console.print(f"[yellow]Type numbers from 1 to {len(q.key_points)}, or press Enter for none.[/]")


def read_rating(suggested: int, card_json: str | None, parameters: tuple[float, ...] | None) -> int:
    shown = "  ".join(f"{r} {name} ({format_interval(d)})" for (r, name), d in
                      zip(RATING_NAMES.items(), preview(card_json, parameters=parameters).values()))
    click.echo(shown)
    while True:
        reply = ask("Rating", default=str(suggested)).strip()
        if reply in {"1", "2", "3", "4"}:
            return int(reply)
        click.echo("Type 1, 2, 3 or 4 (Enter keeps the suggestion).")


class NotSaved(Exception):
    """The store refused an answer and the learner chose not to try again: the session ends."""


def save_answer(save: Callable[[], Answered | None], q: Question, store, console: Console) -> Answered | None:
    """`save()` (the session's rate or leave), offering to try again while the store refuses (another
    process holding the write lock past the store's busy timeout, a full disk); NotSaved when the
    learner gives up. The session keeps the answer's time: a retry saves it at the moment it was given."""
    while True:
        try:
            return save()
        except SAVE_ERRORS as exc:  # the store's message says why (busy: how long it waited) and where
            console.print(f"[bold red]Your answer was not saved:[/] {escape(str(exc))}")
            try:
                again = click.confirm("Try saving it again?", default=True)
            except click.Abort:  # Ctrl+D or Ctrl+C: no
                again = False
            if not again:
                raise NotSaved(q.id) from None


def study_one(session: StudySession, store, console: Console) -> tuple[Answered, bool]:
    """Ask, check, explain, rate and save the session's current question: (its saved answer, stop).

    stop: the learner quit at the rating prompt. An answer already checked (or a card already
    revealed) is then saved with the suggested rating, as the session promises and as the app does
    on leaving. Quit before that point propagates unchanged. NotSaved: the store refused the answer
    and the learner chose not to try again.
    """
    q = session.current
    console.print(QuestionMarkdown(q.prompt))
    session.show()
    response = read_answer(q, console, session.seed, can_undo=session.can_undo)
    verdict = session.check(response)
    if verdict.correct is True:
        console.print("[bold green]✔ Right[/]")
    elif verdict.correct is False:
        console.print(Text.assemble(("✘ Not quite.", "bold red"), " The answer: ", inline_text(verdict.expected)))
    picked, others = why_not_lines(q, response)
    if picked:
        console.print(QuestionMarkdown(why_not_markdown(picked, "Why not")))
    console.print(QuestionMarkdown(q.explanation))
    if others:
        heading = "The other wrong choices" if picked else "Why the other choices are wrong"
        console.print(QuestionMarkdown(why_not_markdown(others, heading)))
    try:
        if q.key_points:
            session.tick(read_key_points(q, console))
        rating = read_rating(session.pending.suggested, store.card_json(q.id), store.fsrs_parameters())
    except Quit:
        # As in the app: an answer checked (or a card revealed) is saved with the suggested rating.
        answered = save_answer(session.leave, q, store, console)
        console.print(f"\nSaved as {RATING_NAMES[answered.rating]} (suggested); stopping.")
        return answered, True
    answered = save_answer(lambda: session.rate(rating), q, store, console)
    console.print(f"[dim]Saved; next review {answered.due.astimezone():%Y-%m-%d %H:%M}.[/]")
    return answered, False


def summary(result: SessionResult) -> str:
    """The session's last line: first tries answered and right; re-asks after Again on top."""
    line = f"Answered {len(result.first_tries)} of {result.total}"
    if checked := len(result.checked):
        line += f"; {result.right} of {checked} checked answers right ({result.right / checked:.0%})"
    if result.reasks:
        line += f"; {plural(result.reasks, 're-ask')} after Again"
    return line + "."


def review_session(topic: str | None, limit: int, new: int | None = None) -> int:
    """`new`: at most this many new questions (None: what is left of the daily limit today)."""
    store = open_store()
    if store is None:
        return 1
    console = Console(highlight=False)
    with store:
        bank = load_bank_reporting()
        if topic is not None and topic not in bank.topics:
            raise click.UsageError(f"no topic '{topic}' (topics: {', '.join(bank.topics)})")
        today = new_today(store, utcnow())
        queue = study_queue(bank, store, topic=topic, limit=limit, new_limit=today.left if new is None else new)
        due_exercises = exercises_due(store, topic)
        if not queue:
            if due_exercises:
                show_due_exercises(due_exercises, console)
                return 0
            if new is None and not today.left and study_queue(bank, store, topic=topic, limit=1):
                console.print(f"Nothing is due, and today's {plural(today.limit, 'new question')} are done "
                              "(your daily limit). Come back tomorrow, or take more now with `quizapp review "
                              "--new N` (`quizapp config new-per-day N` changes the limit).")
                return 0
            console.print("Nothing is due and every question has been seen. Come back later.")
            return 0
        console.print(f"{plural(len(queue), 'question')}. Type q (or Ctrl+D) at any prompt to stop; every answer "
                      "is saved. A question you rate Again comes back later in the session; u at the next "
                      "question's prompt undoes a rating.")
        # The clock seeds a new shuffle of the choices each session and stamps each review; reviews are
        # written through this module's record_review, where a test can stand in a store that refuses.
        session = StudySession(queue, store, clock=utcnow, title=bank.topics[topic].title if topic else "Review",
                               topic=topic, record=record_review)
        lost = None  # the question whose answer the store refused, if the session ended on one
        try:
            while (q := session.current) is not None:
                n, total = session.position
                title = f"{n}/{total} · {bank.topics[q.topic].title} · {q.type}"
                again = " · again" if session.asked_before(q) else ""
                console.rule(f"{title} · difficulty {q.difficulty}{again}")
                try:
                    answered, stop = study_one(session, store, console)
                except Undo:
                    take_back(session, console)
                    continue
                if stop:
                    break
                if answered.requeued:
                    console.print("[dim]Rated Again: it comes back later in this session.[/]")
                session.next()
        except Quit:
            console.print()
        except NotSaved as exc:
            lost = exc.args[0]
            console.print(f"[bold red]Not saved:[/] your last answer (to {escape(lost)}) was not kept; every "
                          "answer before it was. The session ends here; run `quizapp review` again later.")
        console.print(summary(session.result))
        if due_exercises and lost is None:
            show_due_exercises(due_exercises, console)
    return 1 if lost else 0


def take_back(session: StudySession, console: Console) -> None:
    """Undo the session's last rating: its answer is deleted, its card put back, and it is asked again."""
    try:
        undone = session.undo()
    except UNDO_ERRORS as exc:
        console.print(f"[yellow]Could not undo:[/] {escape(str(exc))}")
        return
    console.print(f"[dim]Took back your rating of {escape(undone.question.id)} ({RATING_NAMES[undone.rating]}); "
                  "it is asked again.[/]")


def exercises_due(store, topic: str | None) -> list:
    """The catalog's exercises that are due now (of `topic`, when given), most overdue first."""
    from quizapp.catalog import load_catalog
    from quizapp.study.due import exercise_state

    now = utcnow()
    due = []
    for exercise in load_catalog().values():
        if topic is not None and exercise.topic != topic:
            continue
        state = exercise_state(store, exercise)
        if state.is_due(now):
            due.append((state.due, exercise))
    return [exercise for _, exercise in sorted(due, key=lambda d: d[0])]


def show_due_exercises(exercises: list, console: Console) -> None:
    """Exercises are solved in an editor, not at a prompt: say which file to write and how to grade it."""
    from quizapp.study.due import next_free_path

    console.rule(f"{plural(len(exercises), 'exercise')} due for review")
    for exercise in exercises:
        fresh = next_free_path(Path.cwd(), exercise.id) if (Path.cwd() / f"{exercise.id}.py").exists() \
            else Path(f"{exercise.id}.py")
        console.print(f"[bold]{escape(exercise.title)}[/] ({exercise.id}): write it again from memory.")
        console.print(f"  quizapp start {exercise.id}      (a fresh starter in {fresh.name})")
        console.print(f"  quizapp grade {fresh.name}   (its grade is the review: a pass moves it further out)")
