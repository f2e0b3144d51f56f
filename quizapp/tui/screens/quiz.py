"""A quiz: one question at a time, answer, feedback, rating; every rated answer is saved at once."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Markdown, Static

from quizapp.bank.answers import Verdict, check_answer, numeric_problem
from quizapp.bank.model import Question
from quizapp.bank.shuffle import why_not_lines, why_not_markdown
from quizapp.study.queue import requeue_again
from quizapp.study.schedule import default_rating
from quizapp.study.store import StoreError
from quizapp.tui.context import StudyContext
from quizapp.tui.screens import SCREENS_CSS
from quizapp.tui.screens.summary import SummaryScreen
from quizapp.tui.session import Answered, SessionResult
from quizapp.tui.widgets.answers import HINTS, answer_widget, inline_text
from quizapp.tui.widgets.keypoints import KeyPointList
from quizapp.tui.widgets.rating import RatingBar
from quizapp.tui.widgets.titlebar import TitleBar

KINDS = {"single": "one answer", "multi": "all that apply", "numeric": "a number", "text": "a short answer",
         "order": "put in order", "card": "open question"}
EMPTY = {"single": "Pick a choice first (1-9, or ↑↓).", "multi": "Pick at least one choice (1-9, or space).",
         "numeric": "Type a number first.", "text": "Type an answer first."}


@dataclass
class _Pending:
    """An answer checked but not yet rated: saved on rating, or with the selected rating on leaving."""

    verdict: Verdict
    response: object
    duration_ms: int


class QuizScreen(Screen):
    CSS_PATH = SCREENS_CSS

    BINDINGS = [
        # Not priority bindings: a typed answer must reach its Input before Enter checks it.
        Binding("enter", "submit", "Check", id="submit", tooltip="Check your answer (for a card: show the model answer)"),
        Binding("enter", "confirm", "Save rating", id="confirm", tooltip="Save the answer with the selected rating and go on"),
        # 1-4 rate wherever the focus is once an answer is checked (the rating bar or a card's key points).
        *(Binding(str(r), f"rate({r})", f"Rate {r}", show=False) for r in range(1, 5)),
        Binding("escape", "leave", "End session", id="leave", tooltip="Stop here; every answer given so far is saved"),
        Binding("pageup", "scroll(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll(1)", "Scroll down", show=False),
    ]

    def __init__(self, context: StudyContext, questions: list[Question], title: str, topic: str | None = None) -> None:
        super().__init__()
        self.context = context
        self.questions = questions
        self.index = 0
        self.result = SessionResult(title, topic, total=len(questions))
        self.pending: _Pending | None = None
        self.rating_bar: RatingBar | None = None
        self.shown_at = 0.0
        # Choices are shuffled per question and session: a redraw keeps the order, a new session changes it.
        self.seed = context.now().isoformat()
        self.reasked: dict[str, int] = {}  # question id -> times brought back after Again (requeue_again)

    @property
    def question(self) -> Question:
        return self.questions[self.index]

    def asked_before(self, q: Question) -> bool:
        """Whether `q` was answered earlier this session: it only comes back after Again."""
        return any(a.question.id == q.id for a in self.result.answered)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="quiz-progress")
        yield VerticalScroll(id="quiz-pane")
        yield Vertical(id="rating-dock")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        await self.show_question()

    # -- asking -----------------------------------------------------------------------------

    async def show_question(self) -> None:
        q = self.question
        self.pending = None
        right = sum(1 for a in self.result.first_tries if a.correct)
        wrong = sum(1 for a in self.result.first_tries if a.correct is False)
        again = self.asked_before(q)
        self.query_one("#quiz-progress", Static).update(Text.assemble(
            f"{self.index + 1} of {len(self.questions)}  ", (f"✔ {right}", "green"), " ", (f"✘ {wrong}", "red"),
            "  ", (self.result.title, "bold"), ("  · again, after Again" if again else "", "yellow"),
        ))
        pane = self.query_one("#quiz-pane", VerticalScroll)
        await pane.remove_children()
        await self.query_one("#rating-dock").remove_children()
        self.rating_bar = None
        topic = self.context.bank.topics.get(q.topic)
        meta = f"{KINDS.get(q.type, q.type)}  ·  difficulty {q.difficulty}  ·  {topic.title if topic else q.topic}"
        widget = answer_widget(q, seed=self.seed)
        await pane.mount(Static(meta, classes="quiz-meta"), Markdown(q.prompt, id="prompt"),
                   Static(HINTS[q.type], classes="dim quiz-hint"), widget)
        widget.focus(scroll_visible=False)  # the prompt stays in view above it, on a short terminal too
        pane.scroll_home(animate=False)
        self.shown_at = time.monotonic()

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
        answer = self.query_one("#answer")
        response = answer.response()
        if response is None and q.type != "card":
            self.notify(EMPTY.get(q.type, "Answer first."), severity="warning", timeout=3)
            return
        if q.type == "numeric" and (problem := numeric_problem(response)):
            self.notify(problem, title="Not a number", severity="warning", timeout=6)  # asked again, not marked wrong
            return
        verdict = check_answer(q, response)
        answer.show_result(q)
        self.pending = _Pending(verdict, response, int((time.monotonic() - self.shown_at) * 1000))
        await self.show_feedback(q, verdict)

    async def show_feedback(self, q: Question, verdict: Verdict) -> None:
        if verdict.correct is None:
            head = Text("Model answer", style="bold")
        elif verdict.correct:
            head = Text("✔ Right", style="bold green")
        elif q.type == "order":  # one line per step: a long "A -> B -> C" line is hard to follow
            head = Text.assemble(("✘ Not quite", "bold red"), "  The right order:")
            for number, item in enumerate(q.items, 1):
                head.append(f"\n  {number}. ")
                head.append_text(inline_text(item, "bold"))
        else:
            head = Text.assemble(("✘ Not quite", "bold red"), "  The answer: ", inline_text(verdict.expected, "bold"))
        if verdict.note and verdict.correct is False:
            head.append(f"\n({verdict.note})", style="dim")
        pane = self.query_one("#quiz-pane", VerticalScroll)
        verdict_line = Static(head, id="verdict")
        picked, others = why_not_lines(q, self.pending.response)
        await pane.mount(verdict_line)
        if picked:
            await pane.mount(Markdown(why_not_markdown(picked, "Why not"), id="why-not-picked"))
        await pane.mount(Markdown(q.explanation, id="explanation"))
        if others:
            heading = "The other wrong choices" if picked else "Why the other choices are wrong"
            await pane.mount(Markdown(why_not_markdown(others, heading), id="why-not-others"))
        suggested = default_rating(verdict.correct)
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
        (points or bar).focus()
        # Once the explanation is laid out, bring the verdict to the top: it may be below the fold.
        self.call_after_refresh(pane.scroll_to_widget, verdict_line, top=True, animate=False)

    @on(KeyPointList.SelectedChanged, "#key-points")
    def _ticked(self, event: KeyPointList.SelectedChanged) -> None:
        points = self.query_one("#key-points", KeyPointList)
        if self.pending is not None and self.rating_bar is not None:
            self.pending.response = {"covered": points.covered}
            self.rating_bar.selected = points.suggested

    # -- saving -----------------------------------------------------------------------------

    @on(RatingBar.Rated)
    async def _rated(self, event: RatingBar.Rated) -> None:
        if self.save(event.rating):
            await self.next_question()

    def save(self, rating: int) -> bool:
        """Record the pending answer with `rating`; False (and a notice) if the store refused."""
        pending, q = self.pending, self.question
        if pending is None:
            return True
        try:
            self.context.record(q, rating=rating, correct=pending.verdict.correct, response=pending.response,
                                duration_ms=pending.duration_ms)
        except (sqlite3.Error, StoreError) as exc:
            self.notify(f"Your answer could not be saved: {exc}", title="Not saved", severity="error")
            return False
        self.pending = None
        self.result.answered.append(Answered(q, pending.verdict.correct, rating, again=self.asked_before(q)))
        # Again: the question comes back later in this session, as in Anki (each time a review of its own).
        rest = self.questions[self.index + 1:]
        if requeue_again(rest, q, rating, self.reasked):
            self.questions[self.index + 1:] = rest
        return True

    async def next_question(self) -> None:
        if self.index + 1 < len(self.questions):
            self.index += 1
            await self.show_question()
        else:
            self.finish()

    def action_leave(self) -> None:
        if self.pending is not None and not self.save(self.rating_bar.selected):
            return
        self.finish()

    def on_unmount(self) -> None:
        # Quitting the app mid-feedback still keeps the answer, with the rating then selected.
        if self.pending is not None and self.rating_bar is not None:
            self.save(self.rating_bar.selected)

    def finish(self) -> None:
        if self.result.answered:
            self.app.switch_screen(SummaryScreen(self.context, self.result))
        else:
            self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit":
            return self.pending is None
        if action in ("confirm", "rate"):
            return self.pending is not None and self.rating_bar is not None
        return True

    def action_scroll(self, pages: int) -> None:
        pane = self.query_one("#quiz-pane", VerticalScroll)
        (pane.scroll_page_down if pages > 0 else pane.scroll_page_up)()

