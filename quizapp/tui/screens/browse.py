"""The bank browser: type to search the questions (every word must match, best first, as `quizapp
search` does), open one to see it with its history: when it was answered and how, its next due date,
its FSRS stability, whether it is flagged or suspended. Flag and suspend from there too."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from quizapp.bank.model import Question
from quizapp.bank.search import search
from quizapp.bank.titles import short_title
from quizapp.study.session import SAVE_ERRORS
from quizapp.study.store import QuestionMark
from quizapp.tui.context import StudyContext
from quizapp.tui.widgets.answers import inline_text
from quizapp.tui.widgets.codeblock import CodeMarkdown
from quizapp.tui.widgets.footer import KeysFooter
from quizapp.tui.widgets.titlebar import TitleBar
from quizapp.words import plural

SHOWN = 200  # options in the list; the count above it says how many matched

BROWSE_CSS = """
#browse { padding: 0 1; height: 1fr; }
#browse-results { height: 1fr; }
#browse-count { color: $text-muted; }
#question-info { padding: 0 1; height: 1fr; }
#question-info > Static { margin-bottom: 1; }
.info-title { text-style: bold; }
"""

RATINGS = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
STATES = {1: "learning", 2: "review", 3: "relearning"}


def title_text(prompt: str) -> Text:
    """The question's one-line title with its `code` drawn as code, not as raw backticks."""
    title = short_title(prompt, 90)
    if title.count("`") % 2:  # the cut at the width left a span open
        head, _, tail = title.rpartition("`")
        title = head + tail
    return inline_text(title)


def mark_label(mark: QuestionMark | None) -> str:
    if mark is None:
        return ""
    return " ".join(label for label, on_ in (("⚑ flagged", mark.flagged), ("⏸ suspended", mark.suspended)) if on_)


class BrowseScreen(Screen):
    """Search the bank as you type; Enter (or a click) opens the highlighted question."""

    DEFAULT_CSS = BROWSE_CSS

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="back", tooltip="Back to home"),
        Binding("down", "move('down')", "Next", show=False),
        Binding("up", "move('up')", "Previous", show=False),
        Binding("pagedown", "move('page_down')", "Page down", show=False),
        Binding("pageup", "move('page_up')", "Page up", show=False),
    ]

    def __init__(self, context: StudyContext) -> None:
        super().__init__()
        self.context = context
        self.hits: list[Question] = []

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Vertical(id="browse"):
            yield Input(placeholder="Search the questions: words in the prompt, choices, explanation or tags",
                        id="browse-query")
            yield Static(id="browse-count")
            yield OptionList(id="browse-results")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.fill("")
        self.query_one("#browse-query", Input).focus()

    def on_screen_resume(self) -> None:
        # Marks may have changed; the question the learner came back from stays highlighted.
        results = self.query_one("#browse-results", OptionList)
        back_from = None if results.highlighted is None else results.get_option_at_index(results.highlighted).id
        self.fill(self.query_one("#browse-query", Input).value, highlight=back_from)

    def fill(self, query: str, highlight: str | None = None) -> None:
        """List the questions that match `query`, none highlighted (but `highlight`, when it is listed):
        the first ↓ from the search box lands on the best match, and Enter alone opens it."""
        bank = self.context.bank
        self.hits = [hit.question for hit in search(bank, query)]
        marks = self.context.store.marks()
        results = self.query_one("#browse-results", OptionList)
        results.clear_options()
        options = []
        for q in self.hits[:SHOWN]:
            label = Text.assemble((q.id, "bold"), "  ", title_text(q.prompt), (f"  {q.topic} · {q.type}", "dim"),
                                  (f"  {mark_label(marks.get(q.id))}", "yellow"), no_wrap=True, overflow="ellipsis")
            options.append(Option(label, id=q.id))
        results.add_options(options or [Option(Text("No question has every word typed.", style="dim"),
                                               disabled=True)])
        shown = [q.id for q in self.hits[:SHOWN]]
        results.highlighted = shown.index(highlight) if highlight in shown else None
        more = f" (the first {SHOWN} shown)" if len(self.hits) > SHOWN else ""
        what = "in the bank" if not query.strip() else "match, best first"
        self.query_one("#browse-count", Static).update(f"{plural(len(self.hits), 'question')} {what}{more}. "
                                                       "↑↓ pick one, Enter opens it (or the first).")

    @on(Input.Changed, "#browse-query")
    def _typed(self, event: Input.Changed) -> None:
        self.fill(event.value)

    def action_move(self, where: str) -> None:
        results = self.query_one("#browse-results", OptionList)
        if where == "up" and results.highlighted in (None, 0):
            results.highlighted = None  # above the best match is the search box: nothing picked
            return
        if results.highlighted is None and where == "page_up":
            return
        if results.highlighted is None and where == "page_down":
            where = "down"  # the first page starts at the best match
        getattr(results, f"action_cursor_{where}")()

    @on(Input.Submitted, "#browse-query")
    def _enter(self, event: Input.Submitted) -> None:
        event.stop()
        results = self.query_one("#browse-results", OptionList)
        index = results.highlighted or 0
        option = results.get_option_at_index(index) if results.option_count else None
        if option is not None and not option.disabled:
            results.highlighted = index  # back from it, the list shows which one it was
            self.open(option.id)

    @on(OptionList.OptionSelected, "#browse-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.open(event.option.id)

    def open(self, question_id: str) -> None:
        question = self.context.bank.questions.get(question_id)
        if question is not None:
            self.app.push_screen(QuestionInfoScreen(self.context, question))


class QuestionInfoScreen(Screen):
    """One question with its history, its schedule and its marks."""

    DEFAULT_CSS = BROWSE_CSS

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="back", tooltip="Back to the search"),
        Binding("f", "flag", "Flag", id="flag", tooltip="Flag this question as doubtful, with a note (again: change it)"),
        Binding("c", "unflag", "Clear flag", id="unflag", tooltip="Take the flag and its note off"),
        Binding("exclamation_mark", "suspend", "Suspend/unsuspend", id="suspend",
                tooltip="Keep this question out of every session, or let it back in"),
    ]

    def __init__(self, context: StudyContext, question: Question) -> None:
        super().__init__()
        self.context = context
        self.question = question

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with VerticalScroll(id="question-info"):
            yield Static(id="info-head", classes="info-title")
            yield CodeMarkdown(self.question.prompt, id="info-prompt")
            yield Static(id="info-marks")
            yield Static(id="info-schedule")
            yield Static(id="info-history")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.refresh_info()

    def refresh_info(self) -> None:
        q, store = self.question, self.context.store
        topic = self.context.bank.topics.get(q.topic)
        self.query_one("#info-head", Static).update(Text(
            f"{q.id}  ·  {q.type}  ·  difficulty {q.difficulty}  ·  {topic.title if topic else q.topic}"
            + (f"  ·  tags: {', '.join(q.tags)}" if q.tags else "")))
        mark = store.marks().get(q.id)
        marks = []
        if mark is not None and mark.flagged:
            marks.append(f"⚑ Flagged{': ' + mark.note if mark.note else ''} (since {mark.updated_at[:10]})")
        if mark is not None and mark.suspended:
            marks.append("⏸ Suspended: in no session, interview or due count (press ! to unsuspend)")
        self.query_one("#info-marks", Static).update(Text("\n".join(marks) or "Not flagged, not suspended.",
                                                          style="yellow" if marks else "dim"))
        self.query_one("#info-schedule", Static).update(self.schedule_text())
        self.query_one("#info-history", Static).update(self.history_text())

    def schedule_text(self) -> Text:
        card_json = self.context.store.card_json(self.question.id)
        if card_json is None:
            return Text("Never answered: a new question.", style="dim")
        from quizapp.study.schedule import card_from_json, format_interval

        card = card_from_json(card_json)
        now = self.context.now()
        due = card.due
        when = "now" if due <= now else f"in {format_interval(due - now)}"
        stability = f"{card.stability:.1f} days" if card.stability else "not yet known"
        return Text.assemble(("Next due: ", "bold"), f"{due.astimezone():%Y-%m-%d %H:%M} ({when})   ",
                             ("Stability: ", "bold"), stability, "   ", ("State: ", "bold"),
                             STATES.get(int(card.state), str(card.state)))

    def history_text(self) -> Text:
        rows = self.context.store.answers_of(self.question.id)
        if not rows:
            return Text("No answers yet.", style="dim")
        text = Text.assemble((f"History ({plural(len(rows), 'answer')})", "bold"))
        for at, correct, rating, duration_ms in rows:
            verdict = {1: ("right", "green"), 0: ("wrong", "red")}.get(correct, ("self-rated", "dim"))
            took = f", {duration_ms / 1000:.0f} s" if duration_ms else ""
            text.append(f"\n  {datetime.fromisoformat(at).astimezone():%Y-%m-%d %H:%M}  ")
            text.append(verdict[0], verdict[1])
            text.append(f"  rated {RATINGS.get(rating, rating)}{took}")
        return text

    def _save(self, **changes) -> QuestionMark | None:
        try:
            return self.context.store.set_mark(self.question.id, at=self.context.now(), **changes)
        except SAVE_ERRORS as exc:
            self.notify(f"Not saved: {exc}", title="Not saved", severity="error")
            return None

    def action_flag(self) -> None:
        from quizapp.tui.screens.dialogs import NoteScreen

        mark = self.context.store.marks().get(self.question.id)

        def flagged(note: str | None) -> None:
            if note is not None and self._save(flagged=True, note=note):
                self.notify(f"Flagged {self.question.id}.", title="Flagged", timeout=3)
                self.refresh_info()

        self.app.push_screen(NoteScreen(f"Flag {self.question.id} as doubtful.",
                                        (mark.note or "") if mark else ""), flagged)

    def action_unflag(self) -> None:
        if self._save(flagged=False):
            self.notify(f"Cleared the flag of {self.question.id}.", timeout=3)
            self.refresh_info()

    def action_suspend(self) -> None:
        mark = self.context.store.marks().get(self.question.id)
        now_suspended = not (mark is not None and mark.suspended)
        if self._save(suspended=now_suspended):
            self.notify(f"{'Suspended' if now_suspended else 'Unsuspended'} {self.question.id}.",
                        title="Suspended" if now_suspended else "Unsuspended", timeout=3)
            self.refresh_info()
