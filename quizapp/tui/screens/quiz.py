"""A quiz: one question at a time, answer, feedback, rating; every rated answer is saved at once.

The session itself (the running order, checking, saving, Again) is quizapp.study.session's; this
screen draws it and turns keys into its calls.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from quizapp.bank.kinds import kind_of
from quizapp.bank.model import Question
from quizapp.study.schedule import RATING_NAMES
from quizapp.study.session import SAVE_ERRORS, UNDO_ERRORS, AskAgain, Pending, SessionResult, StudySession
from quizapp.tui.context import StudyContext
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.screens.summary import SummaryScreen
from quizapp.tui.widgets.answers import answer_widget
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.keypoints import KeyPointList
from quizapp.tui.widgets.question import QuestionPanel
from quizapp.tui.widgets.rating import RatingBar
from quizapp.tui.widgets.titlebar import TitleBar


class QuizScreen(Screen):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        # Not priority bindings: a typed answer must reach its Input before Enter checks it.
        Binding("enter", "submit", "Check", id="submit", tooltip="Check your answer (for a card: show the model answer)"),
        Binding("enter", "confirm", "Save rating", id="confirm", tooltip="Save the answer with the selected rating and go on"),
        # 1-4 rate wherever the focus is once an answer is checked (the rating bar or a card's key points).
        *(Binding(str(r), f"rate({r})", f"Rate {r}", show=False) for r in range(1, 5)),
        Binding("escape", "leave", "End session", id="leave", tooltip="Stop here; every answer given so far is saved"),
        # Not priority bindings: a typed answer takes these characters; ctrl+z undoes from the answer box too.
        Binding("u,ctrl+z", "undo", "Undo rating", id="undo",
                tooltip="Take back the last rating saved: the question comes back to be answered again"),
        # Off the footer (it keeps "? Help" on an 80-column terminal); listed in the help screen.
        Binding("f", "flag", "Flag", id="flag", show=False, tooltip="Flag this question as doubtful, with a note"),
        Binding("exclamation_mark", "suspend", "Suspend", id="suspend", show=False,
                tooltip="Keep this question out of every session until you unsuspend it"),
        Binding("pageup", "scroll(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll(1)", "Scroll down", show=False),
    ]

    def __init__(self, context: StudyContext, questions: list[Question], title: str, topic: str | None = None) -> None:
        super().__init__()
        self.context = context
        self.session = StudySession(questions, context.store, clock=context.now, title=title, topic=topic)
        self.rating_bar: RatingBar | None = None

    @property
    def question(self) -> Question | None:
        return self.session.current

    @property
    def index(self) -> int:
        return self.session.index

    @property
    def pending(self) -> Pending | None:
        return self.session.pending

    @property
    def result(self) -> SessionResult:
        return self.session.result

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="quiz-progress")
        yield QuestionPanel(id="quiz-pane")
        yield Vertical(id="rating-dock")
        yield KeysFooter()

    async def on_mount(self) -> None:
        await self.show_question()

    # -- asking -----------------------------------------------------------------------------

    async def show_question(self) -> None:
        q, result = self.question, self.result
        n, total = self.session.position
        again = self.session.asked_before(q)
        self.query_one("#quiz-progress", Static).update(Text.assemble(
            f"{n} of {total}  ", (f"✔ {result.right}", "green"), " ", (f"✘ {result.wrong}", "red"),
            "  ", (result.title, "bold"), ("  · again, after Again" if again else "", "yellow"),
        ))
        await self.query_one("#rating-dock").remove_children()
        self.rating_bar = None
        topic = self.context.bank.topics.get(q.topic)
        kind = kind_of(q.type)
        widget = answer_widget(q, seed=self.session.seed)
        mark = self.context.store.marks().get(q.id)
        flagged = f"  ·  ⚑ flagged{': ' + escape(mark.note) if mark.note else ''}" if mark and mark.flagged else ""
        await self.query_one(QuestionPanel).ask(
            q, widget, meta=f"{kind.label}  ·  difficulty {q.difficulty}  ·  {topic.title if topic else q.topic}"
                            f"{flagged}",
            hint=kind.hint)
        widget.focus(scroll_visible=False)  # the prompt stays in view above it, on a short terminal too
        self.session.show()

    @on(Input.Submitted, "#answer")
    async def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        await self.action_submit()

    def action_confirm(self) -> None:
        self.rating_bar.action_confirm()

    def action_rate(self, rating: int) -> None:
        self.rating_bar.action_rate(rating)

    async def action_submit(self) -> None:
        q = self.question
        if q is None or self.pending is not None:  # a second Enter queued behind the first
            return
        answer = self.query_one("#answer")
        response = answer.response()
        if response is None and q.type != "card":
            self.notify(kind_of(q.type).empty, severity="warning", timeout=3)
            return
        try:
            self.session.check(response)
        except AskAgain as problem:
            self.notify(str(problem), title="Not a number", severity="warning", timeout=6)  # asked again, not marked wrong
            return
        answer.show_result(q)
        await self.show_feedback()

    async def show_feedback(self) -> None:
        pending = self.pending
        q, verdict = pending.question, pending.verdict
        pane = self.query_one(QuestionPanel)
        verdict_line = await pane.show_feedback(q, verdict, pending.response)
        suggested = pending.suggested
        caption = ("How well did you know it? " if verdict.correct is None else "Suggested rating from your answer; ")
        points = KeyPointList(q.key_points, id="key-points") if q.key_points else None
        if points is not None:
            # A card with key points: ticking them suggests the rating; Tab then reaches the rating.
            await pane.mount(points)
            suggested = points.suggested
            caption = "Tick the points you covered (space): the rating follows your ticks; "
        bar = self.rating_bar = RatingBar(self.context.preview(q), suggested, id="rating")
        await self.query_one("#rating-dock").mount(
            Static(caption + "Enter accepts, 1-4 rate at once, ←→ change.", classes="dim rating-caption"), bar)
        (points or bar).focus(scroll_visible=False)
        self.call_after_refresh(self.scroll_to_feedback, pane, verdict_line, points)

    @staticmethod
    def scroll_to_feedback(pane: QuestionPanel, verdict_line: Static, points: KeyPointList | None) -> None:
        # The verdict to the top: it may be below the fold. A card's key points have the focus, so they
        # come into view too, even when that takes the top of the model answer above the fold (PageUp
        # brings it back). Each scroll starts from where the one before left it: immediate.
        pane.scroll_to_widget(verdict_line, top=True, animate=False, immediate=True)
        if points is not None:
            pane.scroll_to_widget(points, animate=False, immediate=True)

    @on(KeyPointList.SelectedChanged, "#key-points")
    def _ticked(self, event: KeyPointList.SelectedChanged) -> None:
        points = self.query_one("#key-points", KeyPointList)
        if self.pending is not None and self.rating_bar is not None:
            self.rating_bar.selected = self.session.tick(points.covered)

    # -- saving -----------------------------------------------------------------------------

    @on(RatingBar.Rated)
    async def _rated(self, event: RatingBar.Rated) -> None:
        if self.pending is not None and self.saved(self.session.rate, event.rating):
            await self.next_question()

    def saved(self, save, rating: int | None) -> bool:
        """`save(rating)` (the session's rate or leave); False, with a notice, when the store refused:
        the answer stays on screen, to rate again."""
        try:
            save(rating)
        except SAVE_ERRORS as exc:
            self.notify(f"Your answer could not be saved: {exc}", title="Not saved", severity="error")
            return False
        return True

    async def next_question(self) -> None:
        if self.session.next() is not None:
            await self.show_question()
        else:
            self.finish()

    def selected_rating(self) -> int | None:
        """The rating the bar shows: what an answer left unrated is saved with."""
        return self.rating_bar.selected if self.rating_bar is not None else None

    def action_leave(self) -> None:
        if self.saved(self.session.leave, self.selected_rating()):
            self.finish()

    def on_unmount(self) -> None:
        # Quitting the app mid-feedback still keeps the answer, with the rating then selected.
        if self.pending is not None:
            self.saved(self.session.leave, self.selected_rating())

    def finish(self) -> None:
        if self.result.answered:
            self.app.switch_screen(SummaryScreen(self.context, self.result))
        else:
            self.app.pop_screen()

    # -- steering: undo, flag, suspend -------------------------------------------------------

    async def action_undo(self) -> None:
        if not self.session.can_undo:
            self.notify("No rating to take back: undo works on a rating saved in this session, before the next "
                        "answer is checked.", severity="warning", timeout=4)
            return
        try:
            undone = self.session.undo()
        except UNDO_ERRORS as exc:
            self.notify(f"Could not undo: {escape(str(exc))}", title="Not undone", severity="error")
            return
        self.notify(f"Took back your rating ({RATING_NAMES[undone.rating]}); answer it again.", title="Undone",
                    timeout=3)
        await self.show_question()

    def action_flag(self) -> None:
        from quizapp.tui.screens.dialogs import NoteScreen

        q = self.question
        if q is None:
            return
        mark = self.context.store.marks().get(q.id)

        def flagged(note: str | None) -> None:
            if note is None:
                return
            try:
                self.context.store.set_mark(q.id, flagged=True, note=note, at=self.context.now())
            except SAVE_ERRORS as exc:
                self.notify(f"The flag could not be saved: {exc}", title="Not saved", severity="error")
                return
            self.notify(f"Flagged {q.id}" + (f": {escape(note)}" if note else "") + ". `quizapp stats --flags` lists flags.",
                        title="Flagged", timeout=4)

        prompt = f"Flag {q.id} as doubtful." + (" It is flagged already; change the note?" if mark and mark.flagged else "")
        self.app.push_screen(NoteScreen(prompt, (mark.note or "") if mark else ""), flagged)

    def action_suspend(self) -> None:
        from quizapp.tui.screens.dialogs import ConfirmScreen

        q = self.question
        if q is None:
            return
        if self.pending is not None:
            self.notify("Rate your answer first: it would be lost.", severity="warning", timeout=3)
            return

        async def confirmed(yes: bool | None) -> None:
            if not yes or self.question is not q:
                return
            try:
                self.context.store.set_mark(q.id, suspended=True, at=self.context.now())
            except SAVE_ERRORS as exc:
                self.notify(f"Could not suspend it: {exc}", title="Not saved", severity="error")
                return
            self.notify(f"Suspended {q.id}: in no session until `quizapp unsuspend {q.id}`.", title="Suspended",
                        timeout=4)
            if self.session.drop(q.id) is not None:
                await self.show_question()
            else:
                self.finish()

        self.app.push_screen(ConfirmScreen(f"Suspend {q.id}? It leaves every session, interview and due count "
                                           f"until `quizapp unsuspend {q.id}`.", yes="Suspend", no="Keep"),
                             confirmed)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "undo":
            return self.session.can_undo
        if action == "submit":
            return self.pending is None
        if action in ("confirm", "rate"):
            return self.pending is not None and self.rating_bar is not None
        return True

    def action_scroll(self, pages: int) -> None:
        pane = self.query_one(QuestionPanel)
        (pane.scroll_page_down if pages > 0 else pane.scroll_page_up)()
