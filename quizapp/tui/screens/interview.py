"""A mock interview under a visible countdown: questions (cards answered in writing, then key points
ticked beside that answer), then, when the plan has one, a coding exercise with a time box: its
starter goes where the learner says, and it is graded at the end or earlier on a key."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static, TextArea

from quizapp.bank.answers import check_answer
from quizapp.bank.kinds import kind_of
from quizapp.interview import Interview
from quizapp.interview.render import clock_text, countdown_words
from quizapp.interview.session import EXERCISE, QUESTIONS
from quizapp.interview.starter import suggested_path, write_starter
from quizapp.study.session import reply_problem
from quizapp.tui.context import StudyContext
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.screens.dialogs import ConfirmScreen, PathScreen
from quizapp.tui.screens.editing import edit_here, edit_outside
from quizapp.tui.widgets.answers import answer_widget
from quizapp.tui.widgets.codeblock import CodeMarkdown
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.gradepanel import GradePanel
from quizapp.tui.widgets.keypoints import KeyPointList
from quizapp.tui.widgets.question import QuestionPanel, verdict_text
from quizapp.tui.widgets.rating import RatingBar
from quizapp.tui.widgets.titlebar import TitleBar

TICK_S = 1.0  # the countdown's refresh
LOW_S = 60  # under a minute left, the clock turns red


def your_answer(text: str) -> VerticalScroll:
    """The learner's written answer, read-only; a long one scrolls in its box."""
    written = text.strip()
    box = VerticalScroll(Static(Text(written) if written else Text("(nothing written)", style="dim")),
                         id="iv-your-answer", can_focus=False)
    box.border_title = "Your answer"
    return box


class InterviewScreen(Screen):
    CSS_PATH = SCREENS_CSS

    DEFAULT_CSS = """
    InterviewScreen #iv-clock { padding: 0 1; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    InterviewScreen #iv-pane { height: 1fr; padding: 0 1; }
    InterviewScreen #iv-text { height: 8; margin: 0 1; }
    InterviewScreen #iv-your-answer { height: auto; max-height: 10; margin: 0 1; padding: 0 1; border: round $secondary 50%; }
    """

    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="submit", tooltip="Give your answer (a card: then see the model answer)"),
        Binding("enter", "submit", "Submit", id="submit-enter", show=False),
        Binding("ctrl+s", "next", "Next", id="next", tooltip="Save this answer and go to the next question"),
        Binding("enter", "next", "Next", id="next-enter", show=False),
        Binding("ctrl+n", "starter", "Starter file", id="starter",
                tooltip="Choose where to write the exercise's starter file (asks before replacing a file)"),
        Binding("ctrl+g", "grade", "Grade now", id="grade", tooltip="Grade your exercise file now and end the interview"),
        Binding("ctrl+e", "edit_here", "Edit", id="edit", tooltip="Edit your exercise file here"),
        Binding("ctrl+o", "editor", "$EDITOR", id="editor", tooltip="Open your exercise file in $VISUAL or $EDITOR"),
        Binding("escape", "leave", "End interview", id="leave",
                tooltip="End the interview now; unanswered questions count as missed"),
    ]

    def __init__(self, context: StudyContext, interview: Interview) -> None:
        super().__init__()
        self.context = context
        self.interview = interview
        self.revealed = False  # the current question's answer is in; waiting for "next"
        self.grading = False  # the exercise is being graded: the interview ends when the panel says how it went
        self.exercise_path: Path | None = None  # None until the learner has said where the starter goes
        self.card_text = ""
        self.response = None
        self.seed = context.now().isoformat()

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="iv-clock")
        yield QuestionPanel(id="iv-pane")
        yield KeysFooter()

    async def on_mount(self) -> None:
        self.interview.start()
        self.set_interval(TICK_S, self.tick)
        await self.show_part()

    # -- the clock --------------------------------------------------------------------------

    async def tick(self) -> None:
        self.show_clock()
        if not self.interview.time_up() or self.grading:
            return
        if self.interview.phase == QUESTIONS:
            self.notify("Time is up for the questions; the rest count as missed.", title="Time")
            self.settle_revealed()
            self.interview.end_questions()
            await self.show_part()
        elif self.interview.phase == EXERCISE and self.exercise_path is None:
            self.notify("Time is up, and no starter file was written: nothing to grade.", title="Time")
            self.interview.exercise_graded(None, "time was up before a starter file was written")
            self.finish()
        elif self.interview.phase == EXERCISE:
            self.notify("Time is up: grading your file as it is.", title="Time")
            self.action_grade()

    def show_clock(self) -> None:
        iv = self.interview
        left = iv.remaining_s()
        if iv.phase == QUESTIONS:
            n, total = iv.position
            where = f"Question {n} of {total}"
        elif iv.phase == EXERCISE:
            where = f"Exercise: {iv.plan.exercise.title}"
        else:
            where = "Done"
        style = "bold red" if left < LOW_S else "bold"
        self.query_one("#iv-clock", Static).update(Text.assemble(
            ("⏱ ", style), (clock_text(left), style), f" {countdown_words(iv)}  ·  ", where, "  ·  ", (f"{iv.plan.minutes:g}-minute interview", "dim")))

    # -- what is on screen ------------------------------------------------------------------

    async def show_part(self) -> None:
        self.show_clock()
        if self.interview.phase == QUESTIONS:
            await self.show_question()
        elif self.interview.phase == EXERCISE:
            await self.show_exercise()
        else:
            self.finish()
        self.refresh_bindings()

    async def show_question(self) -> None:
        q = self.interview.current
        self.revealed = False
        kind = kind_of(q.type)
        if q.type == "card":
            widget = TextArea(id="iv-text", soft_wrap=True, show_line_numbers=False)
            hint = "Write your answer as you would say it, then ctrl+s for the model answer."
        else:
            widget = answer_widget(q, seed=self.seed)
            hint = kind.hint
        topic = self.interview.titles.get(q.topic, q.topic)
        await self.query_one(QuestionPanel).ask(q, widget, meta=f"{kind.short}  ·  {topic}", hint=hint)
        widget.focus()
        self.interview.show()

    async def action_submit(self) -> None:
        q = self.interview.current
        if q is None or self.revealed:
            return
        pane = self.query_one("#iv-pane", VerticalScroll)
        if q.type == "card":
            self.card_text = self.query_one("#iv-text", TextArea).text
            # The answer moves down beside the key points (below), read-only; here it would only repeat.
            self.query_one("#iv-text").display = False
            self.query_one("#question-hint").display = False
        else:
            answer = self.query_one("#answer")
            self.response = answer.response()
            if self.response is None:
                self.notify(kind_of(q.type).empty, severity="warning", timeout=3)
                return
            if (problem := reply_problem(q, self.response)) is not None:
                self.notify(problem, title="Not a number", severity="warning", timeout=6)  # asked again, not marked wrong
                return
            answer.show_result(q)
        self.interview.submit()
        self.revealed = True
        if q.type == "card":
            await self.reveal_card(q, pane)
        else:
            verdict_line = await pane.show_feedback(q, check_answer(q, self.response), self.response)
            await pane.mount(Static("ctrl+s: next question", classes="dim rating-caption"))
            self.focus_next_safe()
            self.call_after_refresh(pane.scroll_to_widget, verdict_line, top=True, animate=False)
        self.refresh_bindings()

    async def reveal_card(self, q, pane: VerticalScroll) -> None:
        """The model answer, then the learner's written answer (read-only) right above what it is judged
        by: the key points to tick or, for a card without them, the rating."""
        explanation = CodeMarkdown(id="explanation")
        await pane.mount(Static(verdict_text(q, None), id="verdict"), explanation, your_answer(self.card_text))
        # Markdown lays itself out in the background; the scroll below needs its height.
        await explanation.update(q.explanation)
        if q.key_points:
            points = KeyPointList(q.key_points, id="key-points")
            await pane.mount(points, Static(points.summary(), id="key-summary", classes="rating-caption"))
            points.focus()
        else:
            rating = RatingBar(self.context.preview(q), 3, id="rating")
            await pane.mount(Static("How well did you know it? 1-4, or ←→, then ctrl+s.", classes="dim rating-caption"),
                             rating)
            rating.focus()
        self.call_after_refresh(self.scroll_to_judging, pane, pane.children[-1])

    @staticmethod
    def scroll_to_judging(pane: VerticalScroll, last) -> None:
        # The model answer from its top where all of it fits; where it does not, its end, so that your
        # answer and the key points you tick against it are on screen together.
        # Each scroll starts from where the one before left it: immediate, not on the next refresh.
        pane.scroll_to_widget(pane.query_one("#verdict"), top=True, animate=False, immediate=True)
        pane.scroll_to_widget(last, animate=False, immediate=True)
        pane.scroll_to_widget(pane.query_one("#iv-your-answer"), animate=False, immediate=True)

    def focus_next_safe(self) -> None:
        # The locked answer keeps Enter; ctrl+s goes on from anywhere.
        self.set_focus(None)

    @on(KeyPointList.SelectedChanged, "#key-points")
    def _ticked(self, event: KeyPointList.SelectedChanged) -> None:
        self.query_one("#key-summary", Static).update(self.query_one("#key-points", KeyPointList).summary())

    @on(RatingBar.Rated)
    async def _rated(self, event: RatingBar.Rated) -> None:
        event.stop()
        await self.action_next()

    @on(Input.Submitted, "#answer")
    async def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        await self.action_submit()

    def settle_revealed(self) -> None:
        """Save the answer on screen, if it was given; ticks and rating as they stand."""
        q = self.interview.current
        if q is None or not self.revealed:
            return
        if q.type != "card":
            self.interview.answer(self.response)
        elif q.key_points:
            self.interview.answer_card(self.card_text, self.query_one("#key-points", KeyPointList).covered)
        else:
            self.interview.answer_card(self.card_text, rating=self.query_one("#rating", RatingBar).selected)
        self.revealed = False
        if self.interview.save_errors:
            self.notify(f"An answer could not be saved: {self.interview.save_errors[-1]}", severity="error")

    async def action_next(self) -> None:
        if not self.revealed:
            return
        self.settle_revealed()
        await self.show_part()

    # -- the exercise -----------------------------------------------------------------------

    async def show_exercise(self) -> None:
        ex = self.interview.plan.exercise
        pane = self.query_one("#iv-pane", VerticalScroll)
        await pane.remove_children()
        await pane.mount(
            Static(id="iv-file-line", classes="quiz-meta"),
            CodeMarkdown(ex.statement, id="iv-statement"),
            Static(id="iv-file-hint", classes="dim quiz-hint"),
            # Not the results' own "press g" (the exercise screen's key): the hint above says what to press here.
            GradePanel(self.context, ex, idle="Not graded yet.", id="grade-panel"),
        )
        self.context.grader.warm_up()  # torch loads in the zygote while the learner reads the statement
        self.show_file()
        self.set_focus(None)
        self.action_starter()

    def show_file(self) -> None:
        """The exercise's file, or that there is none yet, and what to do next."""
        ex = self.interview.plan.exercise
        if self.exercise_path is None:
            file = Text("not written yet (ctrl+n)", style="dim")
            hint = ("Press ctrl+n to choose where your starter file goes, then edit it and grade it (ctrl+g). "
                    "With no file when the time is up, the exercise counts as not done.")
        else:
            label = self.context.show_path(self.exercise_path)
            file = Text(label, style="bold")
            where = "ctrl+e" if self.app.is_web else "ctrl+e here, ctrl+o in $EDITOR, or any editor"
            hint = (f"Edit {label} ({where}), then ctrl+g to grade it. "
                    "When the time is up it is graded as it is.")
        self.query_one("#iv-file-line", Static).update(
            Text.assemble(("Exercise: ", "bold"), ex.title, "  ·  your file: ", file))
        self.query_one("#iv-file-hint", Static).update(hint)
        self.refresh_bindings()

    def action_starter(self, typed: str | None = None) -> None:
        """Ask where the starter file goes (prefilled with a name no file has), and ask before replacing a file."""
        ex = self.interview.plan.exercise
        if typed is None:
            typed = self.context.show_path(suggested_path(ex, self.context.work_dir))

        def chosen(answer: str | None) -> None:
            if self.interview.phase != EXERCISE or self.exercise_path is not None:
                return  # the time ran out, or the interview ended, while the dialog was open
            if not answer:
                self.notify("No starter file yet: press ctrl+n when you know where it goes.", severity="warning")
                return
            path = self.context.resolve(answer)
            if path.is_dir():
                self.notify(f"{self.context.show_path(path)} is a folder: type a file name.", severity="warning")
                self.action_starter(answer)
            elif path.exists():
                self.app.push_screen(
                    ConfirmScreen(f"{self.context.show_path(path)} exists. Replace it with the starter file? "
                                  "What is in it would be lost.", "Replace", "Choose another"),
                    lambda replace: self.place_starter(path, replace=True) if replace else self.action_starter(answer))
            else:
                self.place_starter(path)

        self.app.push_screen(PathScreen(f"Where should the starter file of \"{ex.title}\" go? The exercise's "
                                        "clock is running.", typed, folder=self.context.work_dir.absolute()), chosen)

    def place_starter(self, path: Path, *, replace: bool = False) -> None:
        label = self.context.show_path(path)
        try:
            write_starter(self.interview.plan.exercise, path, replace=replace)
        except FileExistsError:
            self.notify(f"{label} was created meanwhile; it is left as it is.", severity="warning")
            self.action_starter(label)
            return
        except OSError as exc:
            self.notify(f"Could not write {label}: {exc.strerror or exc}", severity="error")
            self.action_starter(label)
            return
        self.exercise_path = path
        how = "ctrl+e" if self.app.is_web else "ctrl+e, or ctrl+o in $EDITOR"
        self.notify(f"Wrote {label}. Edit it ({how}), then grade it (ctrl+g).", title="Starter file")
        self.show_file()

    def action_grade(self) -> None:
        if self.grading or self.interview.phase != EXERCISE or self.exercise_path is None:
            return
        self.grading = True
        self.close_screens_above()
        panel = self.query_one(GradePanel)
        # The app's one grader: warm, and it records the grade in the app's store, as the exercise screen's does.
        panel.grade(self.exercise_path, self.context.show_path(self.exercise_path))
        self.call_after_refresh(self.query_one("#iv-pane", VerticalScroll).scroll_to_widget, panel, animate=False)
        self.refresh_bindings()

    @on(GradePanel.Graded)
    def _graded(self, message: GradePanel.Graded) -> None:
        self.interview.exercise_graded(message.report.to_json())
        self.grading = False
        self.finish()

    @on(GradePanel.Failed)
    def _failed(self, message: GradePanel.Failed) -> None:
        if self.interview.phase == EXERCISE:  # not after the end: a grade cancelled by leaving comes back after it
            self.interview.exercise_graded(None, message.reason)
        self.grading = False
        self.finish()

    def action_edit_here(self) -> None:
        edit_here(self, self.exercise_path, self.context.show_path(self.exercise_path))

    def action_editor(self) -> None:
        edit_outside(self, self.exercise_path, here_key="ctrl+e")

    # -- the end ----------------------------------------------------------------------------

    def action_leave(self) -> None:
        def answered(end: bool | None) -> None:
            if end:
                for panel in self.query(GradePanel):
                    panel.cancel()
                self.settle_revealed()
                self.finish(ended_early=True)

        self.app.push_screen(ConfirmScreen("End the interview now? What you answered is kept; the rest counts "
                                           "as missed.", "End it", "Go on"), answered)

    def close_screens_above(self) -> None:
        """Time up while an editor or a dialog is open: the interview takes the screen back."""
        while self.app.screen is not self and len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def finish(self, ended_early: bool = False) -> None:
        from quizapp.tui.screens.interview_report import InterviewReportScreen

        if self.interview.report is not None:
            return  # already over: a cancelled grade's worker comes back after the end
        card = self.interview.finish(ended_early=ended_early)
        for problem in self.interview.save_errors:
            self.notify(f"Not saved: {problem}", severity="error")
        self.close_screens_above()
        self.app.switch_screen(InterviewReportScreen(self.context, card))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        phase = self.interview.phase
        if action == "submit":
            return phase == QUESTIONS and not self.revealed
        if action == "next":
            return phase == QUESTIONS and self.revealed
        if action == "starter":
            return phase == EXERCISE and not self.grading and self.exercise_path is None
        if action == "editor" and self.app.is_web:  # no terminal to hand over in a browser: hidden
            return False
        if action in ("grade", "edit_here", "editor"):
            return phase == EXERCISE and not self.grading and self.exercise_path is not None
        return True
