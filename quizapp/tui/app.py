"""The App shell: builds the study context, owns navigation, global keys, themes and the command palette."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from quizapp.bank.cache import load_bank_cached, load_outline_cached
from quizapp.catalog import Exercise, load_catalog_cached
from quizapp.study.store import Store, StoreError, utcnow
from quizapp.tui.context import StudyContext
from quizapp.tui.messages import ExerciseRequested, StudyRequested
from quizapp.tui.screens.home import HomeScreen

if TYPE_CHECKING:
    from quizapp.bank.model import Bank

DARK, LIGHT = "textual-dark", "textual-light"
GC_SETTLE_S = 1.0  # after the first screen, when the paused collector catches up


class QuizApp(App[int]):
    """quizapp's front door. Every argument is for tests and scripts; the defaults are the real thing."""

    CSS_PATH = "app.tcss"
    TITLE = "quizapp"
    SUB_TITLE = "ML training techniques, learned and proven"

    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="List the keys of this screen"),
        Binding("ctrl+t", "toggle_theme", "Light/dark", id="theme", show=False,
                tooltip="Switch between the light and the dark theme"),
    ]

    def __init__(self, *, bank: Bank | None = None, store_path: Path | None = None,
                 catalog: dict[str, Exercise] | None = None, grader_cmd: list[str] | None = None,
                 now: datetime | Callable[[], datetime] | None = None, work_dir: Path | None = None,
                 theme: str = DARK, exit_after_first_screen: bool = False, resume_gc: bool = False) -> None:
        super().__init__()
        self._bank = bank
        self._store_path = store_path
        self._catalog = catalog
        self._grader_cmd = grader_cmd
        self._now = (lambda: now) if isinstance(now, datetime) else now
        self._work_dir = work_dir
        self._exit_after_first_screen = exit_after_first_screen
        self.context: StudyContext | None = None
        self.theme = theme
        # True when the launcher paused the collector before importing Textual: run() then treats
        # it as its own pause and turns it back on as it would have.
        self._resume_gc = resume_gc
        self._gc_paused = False

    # -- start and stop ---------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        try:
            store = Store.open(self._store_path)
        except StoreError as exc:
            from quizapp.tui.screens.problems import StoreProblemScreen

            return StoreProblemScreen(exc)
        catalog, catalog_error = self._catalog, None
        if catalog is None:
            try:
                catalog = load_catalog_cached()
            except Exception as exc:  # noqa: BLE001 - a broken exercise.yaml must not stop the app
                catalog, catalog_error = {}, f"the exercises could not be read: {exc}"
        bank, outline = self._bank, None  # a given bank: the context takes its outline from it
        if bank is None:  # home draws from the cached outline; the questions load when something needs them
            outline, loaded = load_outline_cached()
            bank = loaded if loaded is not None else load_bank_cached
        from quizapp.tui.graders import CommandGrader, WarmAppGrader

        work_dir = self._work_dir or Path.cwd()
        # A grader command (tests, custom set-ups) is run as given; otherwise the app grades warm.
        grader = CommandGrader(self._grader_cmd, work_dir) if self._grader_cmd else WarmAppGrader(store)
        context = StudyContext(
            bank=bank, outline=outline, store=store, catalog=catalog, work_dir=work_dir, grader=grader,
            clock=self._now or utcnow, catalog_error=catalog_error,
        )
        self.context = context
        return HomeScreen(context)

    def run(self, *args, **kwargs) -> int | None:
        # Start-up builds tens of thousands of objects that live as long as the app, and the cyclic
        # collector would walk them several times before the first frame (10-25 ms on a slow machine).
        # It is paused until the first screen is up; see _settle_gc for what happens then.
        self._gc_paused = self._resume_gc or gc.isenabled()
        gc.disable()
        try:
            return super().run(*args, **kwargs)
        finally:
            if self._gc_paused:
                # The app ended before the collector settled (a quit within GC_SETTLE_S). Its objects
                # are frozen as a settled app's would be: walking them now, and again at interpreter
                # shutdown, would only hold up the shell prompt (30-50 ms on a slow machine).
                self._gc_paused = False
                gc.freeze()
                gc.enable()

    def on_ready(self) -> None:
        if self._exit_after_first_screen:
            self.exit(0)
        elif self._gc_paused:
            self.set_timer(GC_SETTLE_S, self._settle_gc)

    def _settle_gc(self) -> None:
        """Collect what start-up left behind, then freeze the survivors (modules, the bank, the home
        screen: they live until exit) so that later collections skip them and cost the UI less."""
        if self._gc_paused:
            self._gc_paused = False
            gc.collect()
            gc.freeze()
            gc.enable()

    def on_unmount(self) -> None:
        if self.context is not None:
            self.context.store.close()

    # -- navigation -------------------------------------------------------------------------

    @on(StudyRequested)
    def _study(self, message: StudyRequested) -> None:
        from quizapp.tui.screens.quiz import QuizScreen

        topic = self.context.bank.topics.get(message.topic) if message.topic else None
        if message.topic and topic is None:  # its pack was edited or removed since home was drawn
            self.notify("That topic is no longer in the question bank.", title="Topic gone", severity="warning")
            if isinstance(self.screen, HomeScreen):
                self.screen.refresh_figures()  # the list as the bank is now
            return
        questions = self.context.queue(message.topic)
        if not questions:
            where = f" in {topic.title}" if topic else ""
            today = self.context.new_today()
            if not today.left and self.context.stats().new:
                self.notify(f"Nothing is due{where}, and today's {today.limit} new questions are done (your daily "
                            "limit; `quizapp config new-per-day N` changes it). Come back tomorrow.", title="All done")
                return
            self.notify(f"Nothing to study{where} right now: no card is due and every question has been seen.",
                        title="All done")
            return
        title = topic.title if topic else "Review"
        self.push_screen(QuizScreen(self.context, questions, title, message.topic))

    @on(ExerciseRequested)
    def _exercise(self, message: ExerciseRequested) -> None:
        from quizapp.tui.screens.exercise import ExerciseScreen

        self.push_screen(ExerciseScreen(self.context, self.context.catalog[message.exercise_id]))

    def action_review(self) -> None:
        self.post_message(StudyRequested(None))

    def action_pick_topic(self) -> None:
        from quizapp.tui.screens.dialogs import TopicScreen

        def chosen(slug: str | None) -> None:
            if slug:
                self.post_message(StudyRequested(slug))

        self.push_screen(TopicScreen(self.context.stats().topics), chosen)

    def action_exercises(self) -> None:
        from quizapp.tui.screens.exercises import ExercisesScreen

        self.push_screen(ExercisesScreen(self.context))

    def action_stats(self) -> None:
        from quizapp.tui.screens.stats import StatsScreen

        self.push_screen(StatsScreen(self.context))

    def action_browse(self) -> None:
        from quizapp.tui.screens.browse import BrowseScreen

        self.push_screen(BrowseScreen(self.context))

    def action_help(self) -> None:
        from quizapp.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen.active_bindings.values(), self.get_key_display,
                                        getattr(self.screen, "START_HERE", None)))

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.current_theme.dark else DARK

    # -- command palette: every action with a tooltip on the current screen -------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        seen = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if not active.enabled or not binding.tooltip or binding.description in seen:
                continue
            seen.add(binding.description)
            yield SystemCommand(binding.description, binding.tooltip, partial(active.node.run_action, binding.action))
        from quizapp.tui.transfer_commands import transfer_commands

        yield from transfer_commands(self, self.context)
        yield from (command for command in super().get_system_commands(screen) if command.title not in seen)
