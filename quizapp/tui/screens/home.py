"""Home: what is due, what is new, the streak, exercise progress, today's plan and the week ahead,
mastery per topic."""

from __future__ import annotations

import math
from datetime import datetime, time, timedelta

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from quizapp import paths
from quizapp.study.plan import DAY_NAMES, HomePlan, home_plan, today_lines
from quizapp.study.stats import MASTERY_SHORT, Stats
from quizapp.study.store import StoreFailed
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import StudyRequested
from quizapp.tui.widgets.bars import bar
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.tiles import Tiles
from quizapp.tui.widgets.titlebar import TitleBar
from quizapp.tui.widgets.topiclist import TopicList
from quizapp.words import plural


def topic_row(mastery: Text, percent: str, due: str, new: str, title: str) -> Text:
    """One line of the topics list; figures first, so a narrow terminal clips only the title."""
    cell = Text(no_wrap=True, overflow="ellipsis")
    cell.append_text(mastery)
    cell.append(" " * max(0, 20 - mastery.cell_len) + f" {percent:>4} {due:>3} {new:>3}  ")
    cell.append(title)
    return cell


class FirstThatFits:
    """One line: the first of `lines` that fits the width it is drawn at, else the last, clipped."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = next((text for text in self.lines if len(text) <= options.max_width), self.lines[-1])
        text = Text(line, no_wrap=True, overflow="ellipsis")
        text.stylize("bold", 0, line.find(":") + 1)  # the label
        yield text


LEVELS = "▁▂▃▄▅▆▇█"


def week_row(plan: HomePlan) -> Text:
    """The next seven days in one line: each day's name, a bar as tall as its load next to the week's
    busiest day, and its cards (+ exercises), as "14+1" mirrors "14 cards and 1 exercise" above it."""
    row = Text.assemble(("Next 7 days:", "bold"), " ", no_wrap=True, overflow="ellipsis")
    busiest = max((d.cards + d.exercises for d in plan.week), default=0)
    for n, day in enumerate(plan.week):
        load = day.cards + day.exercises
        row.append("  " if n else "").append(DAY_NAMES[day.day.weekday()] + " ")
        if not load:
            row.append("·", "dim")
            continue
        row.append(LEVELS[max(0, math.ceil(load / busiest * len(LEVELS)) - 1)], "green")
        row.append(str(day.cards) if day.cards else "")
        if day.exercises:
            row.append(f"+{day.exercises}", "bold magenta")
    return row


def next_change(stats: Stats) -> datetime | None:
    """The next moment time alone changes the figures: a question coming due, or local midnight (a
    new day: the streak, the daily limit of new questions)."""
    if stats.now is None:
        return None
    local = stats.now.astimezone()
    midnight = datetime.combine(local.date() + timedelta(days=1), time(), local.tzinfo)
    coming = next((q.due for q in stats.scheduled if q.due > stats.now), None)
    return midnight if coming is None or midnight < coming else coming


class HomeScreen(Screen):
    # Focus is given in on_mount without scrolling: Textual's auto-focus would scroll the screen to
    # show as much of the (tall) topic list as it can, hiding the tiles above it.
    AUTO_FOCUS = ""

    START_HERE = ("Start here: r studies what is due, then new questions; x opens the coding exercises; "
                  "/ searches the bank. Every screen lists its keys under ?.")

    BINDINGS = [
        Binding("r", "app.review", "Review", id="review", tooltip="Study the cards due now, then new questions"),
        # Not a priority binding: Enter must wait in line behind arrow keys typed before it, which the
        # topic list handles in its own queue.
        Binding("enter", "study_topic", "Study topic", id="study-topic",
                tooltip="Study the topic highlighted in the list"),
        # Out of the footer (Enter studies the highlighted topic) so that Help, Browse and Quit fit in 80 columns.
        Binding("t", "app.pick_topic", "Topic", id="topic", show=False, tooltip="Pick a topic to study"),
        Binding("x", "app.exercises", "Exercises", id="exercises", tooltip="Open the coding exercises"),
        Binding("i", "interview", "Interview", id="interview",
                tooltip="A timed mock interview: questions, a coding exercise from 5 minutes on, a report card"),
        Binding("s", "app.stats", "Stats", id="stats", tooltip="Charts and tables of your progress"),
        Binding("b", "bank_problems", "Bank problems", id="bank-problems",
                tooltip="List the problems found in question files"),
        Binding("q", "app.quit", "Quit", id="quit", tooltip="Leave quizapp (your progress is saved)"),
        # After Quit: on an 80-column footer, Quit keeps its place.
        Binding("slash", "app.browse", "Browse", id="browse",
                tooltip="Search the question bank and open a question with its history"),
    ]

    # How often home looks for what changed while it was shown: a CLI verb (an answer, a grade, the
    # daily limit), or a card coming due. A look is one query; the figures are redrawn only then.
    REFRESH_S = 30.0

    def __init__(self, context: StudyContext) -> None:
        super().__init__()
        self.context = context
        self._figures_current = False  # on_mount draws them just before the first resume
        self._drawn_version: tuple[int, int] | None = None  # the store's version the figures show
        self._redraw_at: datetime | None = None  # when time alone changes them: a card due, a new day

    def compose(self) -> ComposeResult:
        # Every widget here is on the first frame, and each costs start-up time: no containers (the
        # screen itself scrolls when the list is taller than the terminal), the four tiles drawn by
        # one widget, and the banner or the empty-bank note only when they will be shown.
        yield TitleBar()
        if problems := self._problems():
            yield Static("\n".join(problems), id="banner")
        yield Tiles([("Due now", "Due"), "New", "Streak", "Exercises"], (1, 1, 1, 2), id="tiles")
        yield Static(id="plan")
        if self.context.outline.topics:
            yield TopicList(f" Mastery per topic · {MASTERY_SHORT}", topic_row(Text("mastery"), "", "due", "new", "topic").plain,
                            id="topics")
        else:
            yield Static(f"No questions to study. Question packs are read from the shipped bank and from "
                         f"{paths.user_questions_dir()}.", id="empty-bank")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.refresh_figures(plan_later=True)
        self._figures_current = True
        if self.context.outline.topics:
            self.query_one("#topics", TopicList).focus(scroll_visible=False)
        self.set_interval(self.REFRESH_S, self.look_for_changes, name="home-refresh")
        self.watch(self.app, "app_focus", self._app_focus_changed, init=False)

    def on_screen_resume(self) -> None:
        # The first resume comes straight after on_mount; later ones come back from screens where
        # answers and grades may have changed the figures.
        if not self._figures_current:
            self.refresh_figures()
        self._figures_current = False

    def _app_focus_changed(self, focused: bool) -> None:
        if focused:  # back from another window, where the CLI may have changed something
            self.look_for_changes()

    def look_for_changes(self) -> None:
        """Redraw the figures when the store changed since they were drawn (another process wrote to
        it), or when the moment came that changes them (a card due, midnight); else draw nothing."""
        if not self.is_current:
            return  # a screen is on top: coming back to home redraws (on_screen_resume)
        try:
            version = self.context.store_version()
        except StoreFailed:
            return  # held or failing this moment: the next look, or the learner's next step, reads again
        if version != self._drawn_version or self._redraw_at is not None and self.context.now() >= self._redraw_at:
            self.refresh_figures()

    def refresh_figures(self, *, plan_later: bool = False) -> None:
        """The figures from the store as it is now. The plan of a learner with grades replays their
        exercises' schedules (fsrs and a few milliseconds): `plan_later` draws it after the first frame."""
        self._drawn_version = self.context.store_version()
        stats = self.context.stats()
        self._redraw_at = next_change(stats)
        if plan_later and any(e.attempts for e in stats.exercises):
            self._show_tiles(stats, None)
            self.call_after_refresh(self._show_plan, stats)
        else:
            self._show_plan(stats)
        if self.context.outline.topics:
            self._show_topics(stats)

    def _show_plan(self, stats: Stats) -> None:
        plan = home_plan(self.context.store, self.context.catalog, stats, self.context.now())
        if plan.next_due is not None and (self._redraw_at is None or plan.next_due < self._redraw_at):
            self._redraw_at = plan.next_due  # an exercise coming due
        self._show_tiles(stats, plan)
        self.query_one("#plan", Static).update(Group(FirstThatFits(today_lines(plan, min(stats.new, self.context.new_today().left))), week_row(plan)))

    def _show_tiles(self, stats: Stats, plan: HomePlan | None) -> None:
        # Each caption comes with shorter wordings, which a narrow terminal shows whole (see Tiles)
        # rather than cutting the longest.
        days = f"{stats.streak_days} day" + ("" if stats.streak_days == 1 else "s")
        today = (("done today", "done") if stats.studied_today else
                 ("study today", "to do") if stats.streak_days else ("start today", "start"))
        passed = sum(1 for e in stats.exercises if e.passed)
        attempted = sum(1 for e in stats.exercises if e.attempts and not e.passed)
        fresh = sum(1 for e in stats.exercises if not e.attempts)
        exercises = f"{passed} passed"
        if plan is not None and plan.exercises_now:
            exercises = f"{plan.exercises_now} due · {exercises}"
        # New: what is left of today's limit of new questions (an interview is exempt from it).
        new_left = min(stats.new, self.context.new_today().left)
        asked = stats.asked  # of the questions due now, the ones failed checks asked for
        self.query_one("#tiles", Tiles).show([
            (str(stats.due), (f"{asked} by checks", plural(asked, "check")) if asked else "cards"),
            (str(new_left), ("left today", "today")),
            ((days, days, f"{stats.streak_days} d"), today),
            (exercises, (f"{attempted} attempted · {fresh} not started", f"{attempted} tried · {fresh} not started",
                         f"{attempted} tried · {fresh} to go"))])

    def _show_topics(self, stats: Stats) -> None:
        self.query_one("#topics", TopicList).set_rows([
            (t.slug, topic_row(bar(t.mastery), f"{t.mastery:.0%}", str(t.due or "-"), str(t.new or "-"),
                               t.title))
            for t in stats.topics])

    def _problems(self) -> list[str]:
        """What the banner warns of: question files or exercises that could not be read."""
        problems = []
        outline = self.context.outline
        if outline.error_count:
            problems.append(f"⚠ {plural(outline.error_count, 'problem')} in {plural(outline.error_files, 'question file')}; "
                            "those files were skipped. Press b to see them.")
        if self.context.catalog_error:
            problems.append(f"⚠ {self.context.catalog_error}")
        return problems

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bank_problems":
            return bool(self.context.outline.error_count)
        if action == "study_topic":
            return bool(self.context.outline.topics)
        return True

    def action_study_topic(self) -> None:
        self.query_one("#topics", TopicList).select_highlighted()

    def action_interview(self) -> None:
        from quizapp.tui.screens.interview_setup import start_interview

        start_interview(self.app, self.context)

    def action_bank_problems(self) -> None:
        from quizapp.tui.screens.problems import BankProblemsScreen

        self.app.push_screen(BankProblemsScreen(self.context.bank.errors))

    @on(TopicList.Selected, "#topics")
    def _study_topic(self, event: TopicList.Selected) -> None:
        self.post_message(StudyRequested(event.slug))
