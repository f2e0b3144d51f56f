"""The report card in the terminal (rich): score per topic, time per question, the exercise, what next."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from quizapp.bank.kinds import QUESTION_KINDS, kind_of
from quizapp.interview.report import MISSED, PARTIAL, RIGHT, ReportCard, TopicResult
from quizapp.interview.session import EXERCISE, QUESTIONS, Interview

OUTCOME_STYLE = {RIGHT: "green", PARTIAL: "yellow", MISSED: "dim"}
CHECK_STYLE = {"pass": "green", "fail": "red", "error": "magenta", "skip": "dim"}
# Each question type's short name, as `quizapp interview` heads a question with it.
KINDS = {name: kind.short for name, kind in QUESTION_KINDS.items()}


def clock_text(seconds: float | None) -> str:
    """m:ss, or - when there is no time."""
    if seconds is None:
        return "-"
    seconds = max(0, round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def countdown_words(interview: Interview) -> str:
    """What the countdown counts, to follow it: the clock runs per part, not for the whole interview."""
    if interview.phase == QUESTIONS and interview.plan.exercise_minutes:
        return f"left for the questions, then {clock_text(interview.plan.exercise_minutes * 60)} for the exercise"
    if interview.phase == EXERCISE:
        return "left for the exercise"
    return "left"


def score_style(score: float) -> str:
    return "green" if score >= 0.75 else "yellow" if score >= 0.4 else "red"


def headline(card: ReportCard) -> Text:
    text = Text.assemble(("Score ", "bold"), (f"{card.score:.0%}", f"bold {score_style(card.score)}"),
                         f"   questions {card.question_score:.0%}")
    if card.exercise is not None:
        text.append(f"   exercise {card.exercise.score:.0%}")
    text.append(f"   time {clock_text(card.elapsed_s)} of {card.minutes:g}:00")
    if card.ended_early:
        text.append("   (ended early)", style="dim")
    return text


def outcome_text(outcome: str, covered: int = 0, points: int = 0) -> Text:
    label = outcome if not points or outcome == MISSED else f"{outcome} ({covered}/{points} points)"
    return Text(label, style=OUTCOME_STYLE.get(outcome, "red"))


def score_text(score: float | None) -> Text:
    return Text("-", style="dim") if score is None else Text(f"{score:.0%}", style=score_style(score))


def exercise_part(t: TopicResult) -> Text:
    """The exercise's share of a topic's score: its checks passed, and the score they make."""
    ex = t.exercise
    if ex is None:
        return Text("-", style="dim")
    if not ex.counted:
        return Text.assemble(ex.status, " ", score_text(ex.score))
    return Text.assemble(f"{ex.passed}/{ex.counted} checks ", score_text(ex.score))


def topic_table(card: ReportCard) -> Table:
    """Per topic: the questions' score and the exercise's checks apart, then the two combined."""
    table = Table(title="Per topic", title_justify="left", expand=False)
    table.add_column("topic")
    table.add_column("questions", justify="right")
    table.add_column("right", justify="right")
    table.add_column("answered", justify="right")
    with_exercise = any(t.exercise is not None for t in card.topics)
    if with_exercise:
        table.add_column("exercise", justify="right")
        table.caption = "combined: the questions with the exercise, which weighs as much as one question"
        table.caption_justify = "left"
    table.add_column("combined" if with_exercise else "score", justify="right")
    for t in card.topics:
        cells = [t.title, score_text(t.question_score), str(t.right) if t.asked else "-",
                 f"{t.answered}/{t.asked}" if t.asked else "exercise only"]
        table.add_row(*cells, *([exercise_part(t)] if with_exercise else []), score_text(t.score))
    return table


def question_table(card: ReportCard) -> Table:
    table = Table(title="Per question", title_justify="left", expand=False)
    table.add_column("#", justify="right")
    table.add_column("topic")
    table.add_column("kind")
    table.add_column("result")
    table.add_column("time", justify="right")
    for n, q in enumerate(card.questions, 1):
        table.add_row(str(n), card.titles.get(q.topic, q.topic), kind_of(q.type).short,
                      outcome_text(q.outcome, q.covered, q.points), clock_text(q.seconds))
    return table


def exercise_lines(card: ReportCard) -> Group | None:
    ex = card.exercise
    if ex is None:
        return None
    head = Text.assemble(("Exercise ", "bold"), ex.title, "  ",
                         (ex.status, CHECK_STYLE.get(ex.status, "red")),
                         f"  {ex.passed}/{ex.counted} checks  ·  {clock_text(ex.seconds)}")
    lines: list = [head]
    if ex.message and ex.status != "pass":
        lines.append(Text(f"  {ex.message}", style="dim"))
    for check in ex.checks:
        line = Text.assemble("  ", (f"{check.status:<5}", CHECK_STYLE.get(check.status, "red")), f" {check.title}")
        if check.message and check.status != "pass":
            line.append(f": {check.message}", style="dim")
        lines.append(line)
    return Group(*lines)


def study_next_text(card: ReportCard) -> Text:
    if not card.study_next:
        return Text("Nothing stands out: every topic asked scored full marks.", style="green")
    # Titles have commas of their own ("...: residual scaling, spikes, z-loss"): a dot keeps them apart.
    names = " · ".join(card.titles.get(s, s) for s in card.study_next)
    return Text.assemble(("Study next: ", "bold"), names)


def print_report_card(card: ReportCard, console: Console) -> None:
    console.rule("Report card")
    console.print(headline(card))
    console.print(topic_table(card))
    console.print(question_table(card))
    lines = exercise_lines(card)
    if lines is not None:
        console.print(lines)
    console.print(study_next_text(card))
