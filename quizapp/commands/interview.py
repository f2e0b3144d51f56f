"""`quizapp interview`: a timed mock interview in the terminal, without the TUI.

The questions use `quizapp review`'s prompts; from 5 minutes on, a coding exercise follows: its
starter is written where you say (never over a file without asking) and graded when you say you are
done or when its time is up.
"""

from __future__ import annotations

import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from quizapp.bank.model import Question
from quizapp.commands.common import display_path, load_bank_reporting, open_store
from quizapp.commands.review import Quit, ask, read_answer, read_key_points, read_rating
from quizapp.commands.richtext import QuestionMarkdown, inline_text
from quizapp.interview import Interview, PlanError, make_plan
from quizapp.interview.plan import why_no_exercise
from quizapp.interview.render import KINDS, clock_text, countdown_words, outcome_text, print_report_card
from quizapp.interview.session import EXERCISE
from quizapp.interview.starter import suggested_path, write_starter
from quizapp.study.store import utcnow
from quizapp.words import plural

clock = utcnow  # tests put a fake clock here
STATUS_EVERY_S = 1.0  # how often the exercise countdown line is redrawn


def run_interview(minutes: int, topics: tuple[str, ...]) -> int:
    store = open_store()
    if store is None:
        return 1
    console = Console(highlight=False)
    with store:
        bank = load_bank_reporting()
        catalog = load_exercises()
        try:
            plan = make_plan(bank, store, catalog, minutes=minutes, topics=topics, now=clock())
        except PlanError as exc:
            raise click.UsageError(str(exc)) from None
        console.print(intro(plan))
        interview = Interview(plan, bank, store, clock=clock)
        ended_early = False
        try:
            ask("Press Enter to start the clock", default="")
            interview.start()
            ask_questions(interview, console, seed=clock().isoformat())
            if interview.phase == EXERCISE:
                do_exercise(interview, console)
        except Quit:
            ended_early = True
            console.print("\nInterview ended; what you answered is kept.")
        card = interview.finish(ended_early=ended_early)
        console.print()
        print_report_card(card, console)
        for problem in interview.save_errors:
            console.print(f"[red]Not saved:[/] {problem}")
    return 0


def load_exercises() -> dict:
    from quizapp.catalog import load_catalog

    try:
        return load_catalog()
    except Exception as exc:  # noqa: BLE001 - a broken exercise.yaml must not stop the questions
        click.echo(f"quizapp: the exercises could not be read ({exc}); this interview has none.", err=True)
        return {}


def intro(plan) -> str:
    head = f"Mock interview: {plural(len(plan.questions), 'question')} in {plan.question_minutes:g} minutes"
    if plan.exercise is not None:
        head += (f", then the {plan.exercise.kind} '{plan.exercise.list_title}' with a {plan.exercise_minutes:g}-minute box "
                 "(plus whatever time the questions leave); you choose where its starter file goes")
    else:
        # The plan has none although the minutes allow one: the topics asked for have no exercise.
        head += f", no coding exercise ({why_no_exercise(plan.minutes, exercise_available=False)})"
    return (head + ".\nOpen questions are answered in writing, then you tick the key points you "
            "covered. Unanswered questions count as missed when time is up. Type q at any prompt to end early.")


def ask_questions(interview: Interview, console: Console, seed: str) -> None:
    while (q := interview.current) is not None:
        if interview.time_up():
            break
        n, total = interview.position
        title = interview.titles.get(q.topic, q.topic)
        console.rule(f"{n}/{total} · {title} · {KINDS.get(q.type, q.type)}")
        # On its own line: in the rule, a narrow terminal would cut what the clock counts.
        console.print(f"⏱ {clock_text(interview.remaining_s())} {countdown_words(interview)}", style="dim")
        console.print(QuestionMarkdown(q.prompt))
        interview.show()
        try:
            with time_up_after(interview.remaining_s()):
                if q.type == "card":
                    response = ask("Your answer (write it out, Enter when done)", default="")
                else:
                    response = read_answer(q, console, seed)
        except TimeUp:
            console.print("\n[yellow]⏱ Time is up for the questions: this one and the rest count as missed.[/]")
            break
        if not interview.submit():
            console.print("[yellow]Time was up before that answer; it and the rest count as missed.[/]")
            break
        settle(interview, q, response, console)
    interview.end_questions()


class TimeUp(Exception):
    """The questions' time ran out while the learner was at a prompt."""


def stdin_is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


@contextmanager
def time_up_after(seconds: float) -> Iterator[None]:
    """Interrupt the prompt inside with TimeUp when `seconds` have passed, so the learner hears that
    time is up when it is, not after typing an answer that is then thrown away. At a terminal on a
    system with SIGALRM, from the main thread; elsewhere (piped input, Windows) the late answer is
    still refused by Interview.submit."""
    usable = (hasattr(signal, "setitimer") and stdin_is_terminal()
              and threading.current_thread() is threading.main_thread())
    if not usable or seconds <= 0:
        yield
        return

    def ring(*_):
        raise TimeUp

    previous = signal.signal(signal.SIGALRM, ring)
    armed = time.monotonic()
    earlier, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if earlier > 0:  # someone else's alarm was set: it rings when it would have
            signal.setitimer(signal.ITIMER_REAL, max(earlier - (time.monotonic() - armed), 1e-3), interval)


def settle(interview: Interview, q: Question, response, console: Console) -> None:
    if q.type != "card":
        result = interview.answer(response)
        if result.outcome == "wrong":
            from quizapp.bank import check_answer

            console.print(Text.assemble(("✘ Not quite.", "bold red"), " The answer: ",
                                        inline_text(check_answer(q, response).expected)))
        else:
            console.print("[bold green]✔ Right[/]")
        return
    console.print(QuestionMarkdown(q.explanation))
    if q.key_points:
        # Beside the key points, so the learner ticks against what they wrote, not what they remember writing.
        console.print(Text.assemble(("Your answer: ", "bold"), response.strip() or ("(nothing written)", "dim")))
        result = interview.answer_card(response, read_key_points(q, console))
    else:
        result = interview.answer_card(response, rating=read_rating(3, interview.store.card_json(q.id)))
    console.print(outcome_text(result.outcome, result.covered, result.points))


# -- the exercise ---------------------------------------------------------------------------


def do_exercise(interview: Interview, console: Console) -> None:
    ex = interview.plan.exercise
    console.rule(f"Exercise · {ex.title}")
    console.print(f"⏱ {clock_text(interview.remaining_s())} {countdown_words(interview)}", style="dim")
    console.print(QuestionMarkdown(ex.statement))
    path = place_starter(ex, console)
    console.print(f"Wrote your starter file: [bold]{display_path(path)}[/]. Edit it in your editor; it is graded "
                  "when you press Enter here, or when the time is up.")
    said_done = wait_for_done(interview)
    console.print("\n" + ("Grading..." if said_done else "Time is up: grading what is in the file..."))
    interview.exercise_graded(grade_file(path, ex, interview.store, console).to_json())


def place_starter(exercise, console: Console) -> Path:
    """Ask where the starter file goes (a free name here by default), ask before replacing a file, write it."""
    while True:
        default = display_path(suggested_path(exercise, Path.cwd()))
        path = Path(ask("Where should the starter file go?", default=default).strip() or default).expanduser()
        path = path if path.is_absolute() else Path.cwd() / path
        shown = display_path(path)
        if path.is_dir():
            console.print(f"[yellow]{shown} is a folder; type a file name, e.g. {default}.[/]")
            continue
        replace = path.exists()
        if replace and not confirm(f"{shown} exists. Replace it with the starter? What is in it would be lost"):
            continue
        try:
            return write_starter(exercise, path, replace=replace)
        except FileExistsError:
            console.print(f"[yellow]{shown} was created meanwhile; it is left as it is.[/]")
        except OSError as exc:
            console.print(f"[red]Could not write {shown}: {exc.strerror or exc}[/]")


def confirm(question: str) -> bool:
    try:
        return click.confirm(question, default=False)
    except click.Abort:
        raise Quit from None


def wait_for_done(interview: Interview) -> bool:
    """True when the learner pressed Enter, False when the time ran out; q (or Ctrl+D) ends the interview."""
    if not stdin_is_terminal():  # piped input: no countdown to redraw, just wait for the line
        ask("Press Enter when your file is ready to grade", default="")
        return True
    try:
        while (left := interview.remaining_s()) > 0:
            click.echo(f"\r⏱ {clock_text(left)} left · Enter: grade now · q Enter: end the interview ",
                       nl=False)
            ready, _, _ = select.select([sys.stdin], [], [], min(left, STATUS_EVERY_S))
            if ready:
                line = sys.stdin.readline()
                if not line or line.strip().lower() == "q":
                    raise Quit
                return True
    except KeyboardInterrupt:
        raise Quit from None
    return False


def grade_file(path: Path, exercise, store, console: Console):
    """Grade and record the attempt as `quizapp grade` does (in the interview's store), and print its report."""
    from quizapp.grading.attempt import grade_and_record
    from quizapp.grading.processes import signals_set
    from quizapp.grading.render import print_report

    cancel = threading.Event()
    with signals_set(cancel):  # Ctrl+C stops the solution's processes, and the grade does not count
        attempt = grade_and_record(exercise, path, cancel=cancel, store=store)
    report = attempt.named(display_path(path))
    if attempt.cancelled:
        return report
    print_report(report, exercise)
    if attempt.not_saved is not None:
        console.print(f"[red]The grade was not saved:[/] {attempt.not_saved}")
    return report
