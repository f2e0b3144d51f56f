"""Small text renderings shared by the screens: mastery bars, percentages, exercise status."""

from __future__ import annotations

from rich.text import Text

from quizapp.study.stats import ExerciseStats


def bar(fraction: float, width: int = 20) -> Text:
    """A horizontal bar, filled in proportion to `fraction` (0..1), with eighth-cell resolution."""
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[rest] if rest else ""
    filled = "█" * full + partial
    text = Text(filled, style="green")
    text.append("·" * (width - len(filled)), style="dim")
    return text


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def exercise_status(stats: ExerciseStats | None, due_in: str | None = None) -> Text:
    """`due_in`: when a passed exercise comes back for review ("now", "2d"); None when not scheduled."""
    if stats is None or not stats.attempts:
        return Text("not started", style="dim")
    if stats.passed:
        text = Text("✔ passed", style="bold green")
        if due_in == "now":
            text.append(" · ").append("due", style="bold yellow")
        elif due_in is not None:
            text.append(f" · due in {due_in}", style="dim")
        return text
    return Text(f"attempted ({stats.last_status})", style="yellow")


def best_result(stats: ExerciseStats | None) -> str:
    if stats is None or not stats.attempts:
        return "-"
    return f"{stats.best_passed}/{stats.best_total}"


DIFFICULTY_MAX = 5  # exercise.yaml's difficulty runs from 1 to 5 (grading.selfcheck holds it there)


def stars(difficulty: int) -> str:
    """The difficulty on its whole scale: a 4 reads as four of five, not as four of three."""
    return "★" * difficulty + "☆" * max(0, DIFFICULTY_MAX - difficulty)
