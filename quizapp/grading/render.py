"""The human grade report: a table of checks, the failures' messages, a summary, a loss plot."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from quizapp.grading.result import NOT_RUN, GradeReport, printable, shown_messages, shown_text
from quizapp.words import plural

STYLE = {"pass": "green", "fail": "red", "error": "magenta", "skip": "dim"}
MARK = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skip": "skip"}


def curves_of(report: GradeReport) -> dict | None:
    for check in report.checks:
        curves = check.data.get("curves")
        if curves and any(curves.get("series", {}).values()):
            return curves
    return None


def notes_of(report: GradeReport) -> list[str]:
    """One-line notes that explain several failures at once (e.g. a loop that turns AMP off on
    the CPU), each once, in check order."""
    notes = [c.data.get("note") for c in report.checks if c.status in ("fail", "error")]
    return list(dict.fromkeys(n for n in notes if isinstance(n, str) and n))


def plot_text(curves: dict, width: int = 70, height: int = 14) -> str:
    import plotext as plt

    plt.clear_figure()
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.title(curves.get("title", ""))
    markers = {"yours": "●", "reference": "+", "float32": "·"}
    # Draw "yours" last so it stays visible where the curves coincide.
    series = sorted(curves["series"].items(), key=lambda kv: kv[0] == "yours")
    start = 0 if curves.get("x") == "step" else 1  # steps count from 0, epochs from 1
    longest = 0
    for name, values in series:
        # A NaN or inf point is left out where it is: the points after it keep their own x.
        points = [(start + i, v) for i, v in enumerate(values) if finite_number(v)]
        if points:
            longest = max(longest, len(values))
            plt.plot([x for x, _ in points], [v for _, v in points], label=name, marker=markers.get(name, "dot"))
    if longest:  # epochs and steps are whole: no 1.50 between epoch 1 and 2
        ticks = integer_ticks(start, start + longest - 1)
        plt.xticks(ticks, [str(t) for t in ticks])
    plt.xlabel(x_label(curves))
    plt.ylabel(str(curves.get("y", "")))
    return plt.build()


def finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) != float("inf")


def unplotted(curves: dict) -> list[str]:
    """The series with no finite point: plotext can neither draw them nor list them in the legend."""
    return [str(name) for name, values in curves.get("series", {}).items()
            if not any(finite_number(v) for v in values or ())]


def x_label(curves: dict) -> str:
    """The x axis's name, saying which series have nothing to draw: a series the legend leaves out
    must still be named, or a run that recorded nothing reads as a missing curve."""
    label = str(curves.get("x", "epoch"))
    missing = unplotted(curves)
    return f"{label}   ({', '.join(missing)}: no value to plot)" if missing else label


def integer_ticks(first: int, last: int, most: int = 8) -> list[int]:
    """Whole-number x ticks from first to last, at most about `most`: every value, or `first` and
    then the multiples of a round step (2, 5, 10, 20, 50...) when there are too many."""
    from itertools import cycle

    step, factors = 1, cycle((2, 2.5, 2))  # 1, 2, 5, 10, 20, 50, 100...
    while (last - first) // step + 1 > most:
        step = int(step * next(factors))
    return [first] + [t for t in range(first - first % step + step, last + 1, step) if t - first >= step / 2]


def print_review(review: list[tuple[str, str]], missing: list[str], console: Console) -> None:
    """The questions a failed check rests on: due now, first in the next review session."""
    if review:
        console.print("[bold]Review these[/] (due now; [bold]quizapp review[/] starts with them):")
        listed = Table.grid(padding=(0, 1))  # a wrapped title stays under its own text, not at column 0
        listed.add_column(width=3, justify="right")
        listed.add_column()
        for qid, title in review:
            listed.add_row("•", Text.assemble(title, (f"  ({qid})", "dim")))
        console.print(listed)
    if missing:
        console.print(f"[dim]Not in your question bank, skipped: {', '.join(missing)}[/]")


def print_report(report: GradeReport, exercise=None, console: Console | None = None,
                 review: tuple[list[tuple[str, str]], list[str]] = ([], [])) -> None:
    """Print the report. Every text that came from the solution's run (messages, what it printed,
    the file's name) goes out with its control characters escaped: it cannot drive the terminal.
    `review`: ([(question id, title)], [ids the bank lacks]) for the failed checks' questions."""
    console = console or Console()
    title = exercise.title if exercise else report.exercise
    # Device and torch are known once the child has started; a file that could not be run has neither.
    where = [str(report.file)] + [f"{name} {value}" for name, value in (("device", report.device),
                                                                       ("torch", report.torch)) if value]
    console.print(Text.assemble((printable(title), "bold"), printable(f"  ({', '.join(where)})")))
    for note in notes_of(report):
        console.print(Text("Note: " + shown_text(note), style="bold yellow"))
    if report.sandbox:
        console.print(Text(report.sandbox[:1].upper() + report.sandbox[1:], style="dim"))
    if report.checks:
        table = Table(show_header=True, header_style="bold", expand=False)
        table.add_column("", width=5)
        table.add_column("check")
        table.add_column("message", overflow="fold", ratio=1)
        for c, message in zip(report.checks, shown_messages(report.checks)):
            if c.status == "error" and message.startswith(NOT_RUN):  # never reached: not an error of its own
                table.add_row(Text("-", style="dim"), Text(printable(c.title), style="dim"), Text("not run", style="dim"))
                continue
            table.add_row(Text(MARK.get(c.status, "?"), style=STYLE.get(c.status, "")), Text(printable(c.title)),
                          Text(shown_text(message), style=STYLE.get(c.status, "") if c.status != "skip" else "dim"))
        console.print(table)
    if report.status == "error" and report.message:
        console.print(Text("The solution could not be graded:\n" + shown_text(report.message), style="magenta"))
    curves = curves_of(report)
    if curves:
        console.print(Text.from_ansi(plot_text(curves, width=min(console.width - 1, 80))))
    if report.output.strip():
        shown = report.output.strip().splitlines()
        tail = "\n".join(shown[-15:])
        console.print(f"[dim]Your code printed {plural(len(shown), 'line')}{'; the last 15' if len(shown) > 15 else ''}:[/]")
        console.print(Text(printable(tail), style="dim"))
    skipped = sum(1 for c in report.checks if c.status == "skip")
    if report.checks:
        summary = f"{report.passed}/{report.counted} checks passed" + (f", {skipped} skipped" if skipped else "")
    else:  # nothing ran (a syntax error, a missing function): there is no count to give
        summary = "no check could run"
    verdict = {"pass": "[bold green]PASSED[/]", "fail": "[bold red]NOT YET[/]", "error": "[bold magenta]ERROR[/]"}
    console.print(f"{verdict.get(report.status, report.status)}: {summary} in {report.duration_s:.1f} s")
    print_review(*review, console)
    if report.status == "fail":
        console.print(f"Stuck? [bold]quizapp hint {report.exercise}[/] shows the next hint.")
