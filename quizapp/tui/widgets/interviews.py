"""Mock interview scores over time: a line per interview and a table of them, newest first."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

from quizapp.bank.model import Bank

CHART_LAST = 20  # interviews on the chart


def when(stamp: datetime | str) -> datetime:
    moment = datetime.fromisoformat(stamp) if isinstance(stamp, str) else stamp
    return moment.astimezone()


def score_ticks(stamps: list[datetime], most: int = 6) -> tuple[list[int], list[str]]:
    """Where the x axis is labelled (interview 1, 2, ...: one point per interview, in order) and with
    what: the day, or the day and the time where the labelled interviews share a day, so two on one
    day are told apart. The latest is always labelled."""
    xs = list(range(1, len(stamps) + 1))
    same_day = len({stamp.date() for stamp in stamps}) < len(stamps)
    step = max(1, -(-len(xs) // (most // 2 if same_day else most)))  # longer labels: fewer of them
    ticks = xs[::-1][::step][::-1]
    days = [stamps[i - 1].date() for i in ticks]
    shared = {day for day in days if days.count(day) > 1}
    return ticks, [stamps[i - 1].strftime("%m-%d %H:%M" if stamps[i - 1].date() in shared else "%m-%d")
                   for i in ticks]


class ScoreChart(PlotextPlot):
    DEFAULT_CSS = "ScoreChart { height: 1fr; min-height: 8; }"

    def show_scores(self, stamps: list[datetime], scores: list[float]) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("Interview score, %" + ("" if scores else ": no interviews yet (press i on the home screen)"))
        if scores:
            xs = list(range(1, len(scores) + 1))
            ys = [s * 100 for s in scores]
            # A thin line for the trend and a dot on each interview: a line drawn in dots alone is
            # a run of flat steps in which the interviews themselves are lost.
            plt.plot(xs, ys, color="cyan", marker="braille")
            plt.scatter(xs, ys, color="cyan", marker="●")
            plt.xticks(*score_ticks(stamps))
            plt.xlim(0.5, len(xs) + 0.5)
        plt.ylim(0, 100)
        plt.yticks([0, 25, 50, 75, 100])
        self.refresh()


class InterviewHistory(Vertical):
    DEFAULT_CSS = """
    InterviewHistory { height: 1fr; }
    InterviewHistory > DataTable { height: 1fr; }
    """

    def compose(self):
        yield ScoreChart(id="interview-chart")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="interview-table")

    def show(self, records: list, bank: Bank) -> None:
        """`records`: the store's interviews, oldest first."""
        recent = records[-CHART_LAST:]
        self.query_one(ScoreChart).show_scores([when(r.started_at) for r in recent], [r.score for r in recent])
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for name in ("when", "score", "minutes", "answered", "exercise", "study next"):
            table.add_column(name, key=name)
        titles = {slug: topic.title for slug, topic in bank.topics.items()}
        for record in reversed(records):
            report = record.report if isinstance(record.report, dict) else {}
            questions = report.get("questions") or []
            answered = sum(1 for q in questions if isinstance(q, dict) and q.get("outcome") != "missed")
            exercise = report.get("exercise") or {}
            ex_text = (f"{exercise.get('id', '?')} {exercise.get('passed', 0)}/{exercise.get('total', 0)}"
                       if exercise else "-")
            study = ", ".join(titles.get(s, s) for s in report.get("study_next") or [])
            table.add_row(when(record.started_at).strftime("%Y-%m-%d %H:%M"), Text(f"{record.score:.0%}", justify="right"),
                          f"{record.minutes:g}", f"{answered}/{len(questions)}", ex_text, study or "-")
        if not table.row_count:
            table.add_row("-", "", "", "", "", "No interviews yet: press i on the home screen")
