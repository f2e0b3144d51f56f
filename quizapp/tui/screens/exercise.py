"""One exercise: the statement and hints, your file, grading with live results, the reference after a pass.

A passed exercise comes back on the schedule: when it is due, the file line says so and c offers a
fresh starter in a new file (<id>_2.py, ...), keeping the old one. After a grade whose checks failed,
the results list the questions those checks rest on ("review these").

Your file is the learner's own (`StudyContext.solution_path`): the file the app wrote or the learner
chose here (remembered per exercise and per folder the app starts in), else ./<id>.py (or the newest
./<id>_N.py) in that folder; a grade of another file from the command line does not move it.

Grading uses the app's warm grader (or the grader command a test or set-up gives). While the
screen is open, saving your file (here or in an outside editor) grades it again once you have
graded it; a grade started while another runs replaces it.
"""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalGroup, VerticalScroll
from textual.screen import Screen
from textual.widgets import Markdown, Static, TabbedContent, TabPane

from quizapp.bank.titles import titles_of
from quizapp.catalog import Exercise
from quizapp.grading.saves import change_summary
from quizapp.study.due import exercise_state, next_free_path
from quizapp.study.exercise_schedule import ExerciseState
from quizapp.study.store import GradeRecord, StoreError
from quizapp.tui.context import StudyContext
from quizapp.tui.savewatch import SaveWatcher
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.screens.dialogs import ConfirmScreen, PathScreen
from quizapp.tui.screens.editing import edit_here, edit_outside
from quizapp.tui.widgets.bars import stars
from quizapp.tui.widgets.codeblock import CodeMarkdown
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.gradepanel import GradePanel
from quizapp.tui.widgets.results import GradeResults
from quizapp.tui.widgets.titlebar import TitleBar


class ExerciseScreen(Screen):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        Binding("g", "grade", "Grade", id="grade", tooltip="Run the grader on your file"),
        Binding("x", "cancel", "Cancel grading", id="cancel", tooltip="Stop the grader"),
        Binding("c", "create", "Create", id="create", tooltip="Write the starter file (asks before overwriting)"),
        Binding("R", "reset", "Reset", id="reset", show=False, tooltip="Put the starter file back (asks first; progress is kept)"),
        Binding("i", "edit_here", "Edit", id="edit", tooltip="Edit your file here, with Python highlighting"),
        Binding("e", "editor", "$EDITOR", id="editor", tooltip="Open your file in $VISUAL or $EDITOR"),
        Binding("h", "hint", "Hint", id="hint", tooltip="Show the next hint"),
        Binding("v", "solution", "Solution", id="solution", tooltip="Read the reference solution (asks first until you pass)"),
        Binding("s", "tab('statement')", "Statement", id="statement", show=False, tooltip="Show the statement and hints"),
        Binding("r", "tab('results')", "Results", id="results", show=False, tooltip="Show the last grading results"),
        Binding("escape,q", "app.pop_screen", "Back", id="back", tooltip="Back to the exercises"),
    ]

    def __init__(self, context: StudyContext, exercise: Exercise) -> None:
        super().__init__()
        self.context = context
        self.exercise = exercise
        self.hints_shown = 0
        self.reference_unlocked = False  # the learner chose to read the reference before passing
        self.reference_seen = False  # recorded once per screen
        self.passed_now = False
        self.last_statuses: dict[str, str] | None = None
        # This exercise's grades, read from the store when the screen opens and after each grade
        # (not on every redraw or binding check).
        self.grades: list[GradeRecord] = []
        self.state: ExerciseState | None = None  # its schedule, read with the grades

    @property
    def path(self) -> Path:
        return self.context.solution_path(self.exercise.id)

    @property
    def label(self) -> str:
        return self.context.show_path(self.path)

    @property
    def passed(self) -> bool:
        return self.passed_now or any(g.status == "pass" for g in self.grades)

    @property
    def due(self) -> bool:
        """Passed before and due for review now."""
        return self.state is not None and self.state.is_due(self.context.now())

    def file_passed(self) -> bool:
        """Whether the file shown is one that passed before: its pass again would be no review."""
        try:
            mine = self.path.resolve()
            return self.path.is_file() and any(g.status == "pass" and g.file_path and Path(g.file_path).resolve() == mine
                                               for g in self.grades)
        except OSError:
            return False

    def fresh_path(self) -> Path | None:
        """Where c puts a fresh starter instead of the file shown: the next free <id>_N.py beside it,
        when the exercise is due and the file shown is the one that passed (it is kept)."""
        if not self.due or not self.file_passed():
            return None
        return next_free_path(self.path.parent, self.exercise.id)

    def compose(self) -> ComposeResult:
        ex = self.exercise
        yield TitleBar()
        with Vertical(id="exercise-head"):
            yield Static(Text.assemble((ex.title, "bold"), f"  {stars(ex.difficulty)}  ", (ex.topic, "dim")))
            yield Static(id="file-line")
        with TabbedContent(id="exercise-tabs"):
            with TabPane("Statement", id="statement"):
                with VerticalScroll():
                    yield CodeMarkdown(ex.statement, id="statement-text")
                    yield VerticalGroup(id="hints")  # as tall as its hints: the statement's scroll reaches them
            with TabPane("Results", id="results"):
                with VerticalScroll():
                    # Saving the file grades it again, once it was graded here (as `quizapp watch` does).
                    yield GradePanel(self.context, self.exercise, regrade_on_save=True, id="grade-panel")
            with TabPane("Solution", id="solution"):
                with VerticalScroll():
                    yield Static(id="reference")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.context.grader.warm_up()  # torch loads in the zygote while the learner reads the statement
        # The file shown now stays the file of this screen: a grade of another copy from the command line
        # does not move it (c picks another file).
        self.context.pin_solution_path(self.exercise.id)
        # Hints already seen (here or with `quizapp hint`) stay shown under the statement.
        self.hints_shown = min(self.context.store.hints_shown(self.exercise.id), len(self.exercise.hints))
        if self.hints_shown:
            self.query_one("#hints").mount_all([self.hint_block(n) for n in range(1, self.hints_shown + 1)])
        self.refresh_file_line()

    def on_screen_resume(self) -> None:
        self.refresh_file_line()

    def refresh_file_line(self) -> None:
        """The file line, from the store's grades read again (a grade here or from the command line)."""
        grades = self.grades = self.context.grades(self.exercise.id)
        self.state = exercise_state(self.context.store, self.exercise) if grades else None
        line = Text.assemble(("Your file: ", "bold"), self.label)
        if not self.path.exists():
            line.append("  (not created yet: press c)", style="dim")
        if grades:
            last = grades[-1]
            line.append(f"  ·  last grade: {last.status} {last.checks_passed}/{last.checks_total}",
                        style="green" if last.status == "pass" else "yellow")
        line.append_text(self.schedule_line())
        self.query_one("#file-line", Static).update(line)
        self.refresh_bindings()
        self.panel.watch(self.path, self.label)

    def schedule_line(self) -> Text:
        """A second line once the exercise is on the schedule: due for review, or when it comes back."""
        if self.state is None or self.state.due is None:
            return Text()
        if self.due:
            fresh = self.fresh_path()
            if fresh is not None:
                # The dialog of c says that the file shown is kept.
                return Text.assemble("\n", ("Due for review: solve it again from a fresh starter", "bold yellow"),
                                     f" (c writes {self.context.show_path(fresh)}).")
            return Text.assemble("\n", ("Due for review: solve it again in this file", "bold yellow"),
                                 "; its pass is the review.")
        from quizapp.study.schedule import format_interval

        # Not "passed": after a failed review it comes back a day later too.
        return Text(f"\nComes back for review in {format_interval(self.state.due - self.context.now())}.", style="dim")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.grading
        if action == "reset":
            return True if self.path.is_file() else None
        if action == "hint":
            return self.hints_shown < len(self.exercise.hints) or None
        if action == "editor":  # in a browser there is no terminal to hand to an editor: edit here
            return not self.app.is_web  # False hides the key from the footer
        return True

    def action_tab(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane

    # -- the statement ----------------------------------------------------------------------

    def hint_block(self, number: int) -> Markdown:
        return CodeMarkdown(f"**Hint {number} of {len(self.exercise.hints)}.** {self.exercise.hints[number - 1]}",
                        classes="hint")

    async def action_hint(self) -> None:
        if self.hints_shown >= len(self.exercise.hints):
            return
        self.hints_shown += 1
        # Shared with `quizapp hint`: the next hint continues from the last one shown anywhere.
        self.context.store.set_hints_shown(self.exercise.id, self.hints_shown)
        self.mark("hint")  # a pass after a hint is rated Hard
        block = self.hint_block(self.hints_shown)
        self.action_tab("statement")
        await self.query_one("#hints").mount(block)
        self.refresh_bindings()
        # The hint's Markdown lays its blocks out after mounting: scroll once it has its height.
        self.call_after_refresh(lambda: block.parent.parent.scroll_to_widget(block, top=True, animate=False))

    def action_solution(self) -> None:
        if self.passed or self.reference_unlocked:
            self.action_tab("solution")
            return

        def answered(show: bool | None) -> None:
            if show:
                self.reference_unlocked = True
                self.action_tab("solution")
                self.show_reference()

        self.app.push_screen(ConfirmScreen("You have not passed this exercise yet. Read the reference solution "
                                           "anyway? Writing it yourself is what you will do at the interview.",
                                           "Show it", "Not yet"), answered)

    @on(TabbedContent.TabActivated, pane="#results")
    def _results_shown(self) -> None:
        # The checks' table takes the keys however the tab opened (r, a click, a grade): its PageDown,
        # End, Down... scroll the results at the first press.
        self.results.table.focus()

    @on(TabbedContent.TabActivated, pane="#solution")
    def show_reference(self) -> None:
        """The reference solution, or why it is not shown yet; filled whenever its tab opens."""
        reference = self.query_one("#reference", Static)
        if not (self.passed or self.reference_unlocked):
            reference.update("The reference solution opens once your file passes (press g to grade it), "
                             "or press v to read it now.")
        else:
            try:
                code = self.exercise.reference.read_text(encoding="utf-8")
            except OSError as exc:
                reference.update(f"The reference solution could not be read: {exc.strerror or exc}")
            else:
                reference.update(Syntax(code, "python", line_numbers=True, word_wrap=True,
                                        theme="ansi_dark" if self.app.current_theme.dark else "ansi_light"))
                if not self.reference_seen:
                    self.reference_seen = True
                    # Read while the exercise is new or due, its next pass is rated Again.
                    self.mark("solution")

    def mark(self, kind: str) -> None:
        """Keep a hint shown or the reference read: the exercise's next review is rated by them."""
        try:
            self.context.store.record_exercise_event(self.exercise.id, kind, at=self.context.now())
        except StoreError as exc:
            self.notify(f"Not saved that the {kind} was shown: {exc.reason}", severity="warning")

    # -- your file --------------------------------------------------------------------------

    def action_create(self) -> None:
        def chosen(typed: str | None) -> None:
            if not typed:
                return
            path = self.context.resolve(typed)
            self.context.chosen_paths[self.exercise.id] = path
            if not path.exists():
                self.write_starter(path)
                return
            self.app.push_screen(
                ConfirmScreen(f"{self.context.show_path(path)} exists. Replace it with the starter file? "
                              "Your code in it would be lost.", "Replace", "Keep mine"),
                lambda replace: self.write_starter(path) if replace else self.kept(path))

        folder = self.context.work_dir.absolute()
        fresh = self.fresh_path()
        if fresh is not None:  # due for review: a fresh starter in a new file, the old one kept
            self.app.push_screen(PathScreen(f"{self.exercise.id} is due for review. Where should a fresh starter go? "
                                            f"{self.label} is kept.", self.context.show_path(fresh), folder=folder),
                                 chosen)
            return
        self.app.push_screen(PathScreen(f"Where should the starter file of {self.exercise.id} go?", self.label,
                                        folder=folder), chosen)

    def write_starter(self, path: Path) -> None:
        try:
            text = self.exercise.starter.read_text(encoding="utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Could not write {self.context.show_path(path)}: {exc.strerror or exc}", severity="error")
            return
        self.make_own(path)
        self.notify(f"Wrote {self.context.show_path(path)}. Edit it (i or e), then grade it (g).", title="Starter file")
        self.refresh_file_line()

    def kept(self, path: Path) -> None:
        self.make_own(path)
        self.notify(f"Kept {self.context.show_path(path)}; it is the file quizapp grades.")
        self.refresh_file_line()

    def make_own(self, path: Path) -> None:
        """The file the app wrote or the learner kept is theirs: shown and watched here from now on, also
        in the next sessions, whatever other file a grade from the command line names."""
        try:
            self.context.choose_solution_path(self.exercise.id, path)
        except StoreError as exc:
            self.notify(f"Not saved that {self.context.show_path(path)} is your file: {exc.reason}", severity="warning")

    def _need_file(self) -> bool:
        if self.path.is_file():
            return True
        self.notify(f"There is no {self.label} yet. Press c to create it from the starter.", severity="warning")
        return False

    def action_edit_here(self) -> None:
        if self._need_file():
            edit_here(self, self.path, self.label, lambda saved: self.refresh_file_line())

    def action_editor(self) -> None:
        if self._need_file():
            edit_outside(self, self.path, here_key="i")
            self.refresh_file_line()

    def action_reset(self) -> None:
        if not self.path.is_file():
            return
        try:
            same = self.path.read_bytes() == self.exercise.starter.read_bytes()
        except OSError:
            same = False
        if same:
            self.notify(f"{self.label} is already the starter file.")
            return
        self.app.push_screen(
            ConfirmScreen(f"Put the starter file back in {self.label}? Your code in it would be lost; "
                          "your grades and progress are kept.", "Reset", "Keep mine"),
            lambda reset: self.reset_to_starter() if reset else None)

    def reset_to_starter(self) -> None:
        self.write_starter(self.path)
        # The starter is not graded by itself (it would only add a failed attempt); the next save is.
        self.panel.ungraded_save()

    # -- grading ----------------------------------------------------------------------------

    @property
    def panel(self) -> GradePanel:
        return self.query_one(GradePanel)

    @property
    def results(self) -> GradeResults:
        return self.panel.results

    @property
    def grading(self) -> bool:
        return self.panel.grading

    @property
    def saves(self) -> SaveWatcher:
        return self.panel.saves

    def action_grade(self) -> None:
        if self._need_file():
            self.panel.grade(self.path, self.label)

    def action_cancel(self) -> None:
        self.panel.cancel()

    @on(GradePanel.Grading)
    def _grading(self) -> None:
        self.action_tab("results")
        self.refresh_bindings()

    @on(GradePanel.Graded)
    def _graded(self, message: GradePanel.Graded) -> None:
        report = message.report
        if report.review:  # the questions the failed checks rest on: due now, first in the next review
            self.results.show_review(*titles_of(report.review, self.context.bank.questions))
        statuses = {c.id: c.status for c in report.checks}
        change = change_summary(self.last_statuses, statuses) if self.last_statuses is not None else ""
        self.last_statuses = statuses
        if report.status == "pass":
            self.passed_now = True
            self.notify("Every check passed. Press v to compare with the reference solution." + self.next_on_path(),
                        title="Passed")
        elif change:
            self.notify(change, title="Since the last grade")
        self.refresh_file_line()  # the grader recorded the grade in the store

    @on(GradePanel.Failed)
    def _failed(self) -> None:
        self.refresh_file_line()

    def next_on_path(self) -> str:
        """After a pass: the next exercise on the path (weakest topic first, then the easiest, not yet passed)."""
        from quizapp.study.path import next_exercise

        others = {ex_id: ex for ex_id, ex in self.context.catalog.items() if ex_id != self.exercise.id}
        try:
            upcoming = next_exercise(others, self.context.stats())
        except StoreError:
            return ""
        return f"\nNext on your path: {upcoming.title} ({upcoming.id})." if upcoming is not None else ""
