"""Stats: a summary (exercises due, the learner's pace), activity per day as charts, a per-topic table,
and the history of grades."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from quizapp.catalog import is_drill_id
from quizapp.study.due import asked_words
from quizapp.study.plan import exercise_schedules, span
from quizapp.study.stats import LEARNING_MEANING, MASTERY_MEANING, Stats, exercise_seconds
from quizapp.tui.context import StudyContext
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.widgets.bars import bar, percent
from quizapp.tui.widgets.charts import DailyChart
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.interviews import InterviewHistory
from quizapp.tui.widgets.results import status_text
from quizapp.tui.widgets.titlebar import TitleBar

CHART_DAYS = 14


def last_days(today: date, days: int = CHART_DAYS) -> list[date]:
    return [today - timedelta(days=n) for n in range(days - 1, -1, -1)]


class StatsScreen(Screen):
    CSS_PATH = SCREENS_CSS

    # The panes fill what the tabs leave and no more: as tall as their content ("auto"), a pane whose
    # table takes 1fr ran past the footer, and the caption under the topics table was never seen.
    DEFAULT_CSS = """
    StatsScreen #stats-tabs > ContentSwitcher { height: 1fr; }
    StatsScreen #stats-tabs TabPane { height: 1fr; }
    """

    BINDINGS = [
        Binding("a", "tab('activity')", "Activity", id="activity", tooltip="Reviews and accuracy per day"),
        Binding("t", "tab('topics')", "Topics", id="topics", tooltip="Progress per topic"),
        Binding("x", "tab('history')", "Exercises", id="history", tooltip="Every grade of every exercise"),
        Binding("i", "tab('interviews')", "Interviews", id="interviews", tooltip="Your mock interview scores over time"),
        Binding("escape,q", "app.pop_screen", "Back", id="back", tooltip="Back to the home screen"),
    ]

    def __init__(self, context: StudyContext, tab: str | None = None) -> None:
        super().__init__()
        self.context = context
        self.first_tab = tab

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="stats-summary")
        with TabbedContent(id="stats-tabs"):
            with TabPane("Activity", id="activity"):
                with Vertical():
                    yield DailyChart(id="reviews-chart")
                    yield DailyChart(id="accuracy-chart")
            with TabPane("Topics", id="topics"):
                with Vertical():
                    yield DataTable(cursor_type="row", zebra_stripes=True, id="topic-table")
                    yield Static(f"{MASTERY_MEANING} {LEARNING_MEANING}", id="mastery-meaning", classes="caption")
            with TabPane("Exercises", id="history"):
                yield DataTable(cursor_type="row", zebra_stripes=True, id="grade-table")
            with TabPane("Interviews", id="interviews"):
                yield InterviewHistory(id="interview-history")
        yield KeysFooter()

    def on_mount(self) -> None:
        stats = self.context.stats()
        self._summary(stats)
        self._charts(stats)
        self._topics(stats)
        self._history()
        self.query_one("#interview-history", InterviewHistory).show(self.context.store.interviews(), self.context.bank)
        if self.first_tab:
            self.action_tab(self.first_tab)

    def action_tab(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane

    def _summary(self, stats: Stats) -> None:
        exercises = [e for e in stats.exercises if not is_drill_id(e.exercise_id)]
        drills = [e for e in stats.exercises if is_drill_id(e.exercise_id)]
        states = exercise_schedules(self.context.store, self.context.catalog)
        now = self.context.now()
        # Questions first: "due now" names the share failed checks asked for, and beside mastery's
        # 0% (a newcomer's for days) stands what is on its way to it.
        summary = Text.assemble(
            ("Due now ", "bold"), f"{stats.due}{asked_words(stats.asked)}   ",
            ("Learning ", "bold"), f"{stats.learning}   ", ("Mastered ", "bold"), f"{stats.mastered}\n",
            ("Streak ", "bold"), f"{stats.streak_days} d   ", ("Answers ", "bold"), f"{stats.attempts}   ",
            ("Right ", "bold"), f"{percent(stats.accuracy)}   ",
            ("Exercises passed ", "bold"), f"{sum(1 for e in exercises if e.passed)}/{len(exercises)}   ",
            *((("Drills passed ", "bold"), f"{sum(1 for e in drills if e.passed)}/{len(drills)}   ") if drills else ()),
            ("Exercises due ", "bold"), str(sum(1 for s in states.values() if s.is_due(now))),
        )
        exercise_s = exercise_seconds(states.values(), self.context.store.grade_events(),
                                      self.context.store.exercise_events()) if states else None
        if stats.answer_seconds is not None or exercise_s is not None:
            # A first-try pass leaves no time between grades to measure (it counts 0): a median of 0
            # measured nothing, and says "—" rather than "0 s".
            pace = [f"{span(stats.answer_seconds)} a card" if stats.answer_seconds is not None else "",
                    (f"{span(exercise_s)} an exercise from first grade to pass" if exercise_s else
                     "— an exercise (first-try passes leave no time to measure)") if exercise_s is not None else ""]
            summary.append("\nYour pace (medians): ", style="bold").append(", ".join(p for p in pace if p))
        retired = [e.exercise_id for e in stats.exercises if e.exercise_id not in self.context.catalog]
        if retired:
            summary.append(f"\nKept, not scheduled: the grade history of {', '.join(retired)} "
                           "(exercises this installation no longer has).", style="dim")
        self.query_one("#stats-summary", Static).update(summary)

    def _charts(self, stats: Stats) -> None:
        days = last_days(self.context.now().astimezone().date())
        answers = {d: stats.reviews_per_day.get(d, 0) for d in days}
        self.query_one("#reviews-chart", DailyChart).show_days(f"Answers per day (last {CHART_DAYS} days)", days, answers)
        accuracy = {d: v * 100 for d, v in stats.accuracy_per_day.items() if d in days}
        self.query_one("#accuracy-chart", DailyChart).show_days(
            "Right answers, % per day" + ("" if accuracy else ": no checked answers yet"), days, accuracy,
            kind="line", ylim=(0, 100))

    def _topics(self, stats: Stats) -> None:
        table = self.query_one("#topic-table", DataTable)
        # Figures first, the title last: a long title is what gets clipped on a narrow terminal.
        # Beside mastery, what is on its way to it: a newcomer's mastery stays at 0% for days.
        table.add_column("mastery")
        for name in ("learning", "mastered", "seen", "answers", "right", "due"):
            table.add_column(name, key=name)
        table.add_column("topic")
        for t in stats.topics:
            table.add_row(Text.assemble(bar(t.mastery, 8), f" {t.mastery:>4.0%}"), Text(str(t.learning), justify="right"),
                          Text(str(t.mastered), justify="right"), f"{t.seen}/{t.questions}",
                          str(t.attempts), percent(t.accuracy), str(t.due), t.title, key=t.slug)

    def _history(self) -> None:
        table = self.query_one("#grade-table", DataTable)
        for name in ("when", "result", "checks", "device", "time", "exercise"):
            table.add_column(name, key=name)
        titles = {ex.id: ex.title for ex in self.context.catalog.values()}
        for grade in reversed(self.context.store.grades()):
            when = datetime.fromisoformat(grade.graded_at).astimezone().strftime("%Y-%m-%d %H:%M")
            table.add_row(when, status_text(grade.status), f"{grade.checks_passed}/{grade.checks_total}",
                          grade.device or "-", "-" if grade.duration_s is None else f"{grade.duration_s:.1f} s",
                          titles.get(grade.exercise_id, grade.exercise_id))
        if not table.row_count:
            table.add_row("-", "", "", "", "", "No grades yet: open an exercise and press g")
