"""The pane a question is asked in, as the quiz and the mock interview both draw it: what kind of
question it is, the prompt, how to answer and the answer widget; once answered, the verdict, why the
wrong choices are wrong, and the explanation."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from quizapp.bank.answers import Verdict
from quizapp.bank.model import Question
from quizapp.bank.shuffle import why_not_lines, why_not_markdown
from quizapp.tui.widgets.answers import inline_text
from quizapp.tui.widgets.codeblock import CodeMarkdown


def verdict_text(question: Question, verdict: Verdict | None) -> Text:
    """The line above the explanation: right, not quite (and the right answer), or, for a card
    (no verdict, or one without right or wrong), the model answer."""
    if verdict is None or verdict.correct is None:
        return Text("Model answer", style="bold")
    if verdict.correct:
        return Text("✔ Right", style="bold green")
    if question.type == "order":  # one line per step: a long "A -> B -> C" line is hard to follow
        head = Text.assemble(("✘ Not quite", "bold red"), "  The right order:")
        for number, item in enumerate(question.items, 1):
            head.append(f"\n  {number}. ")
            head.append_text(inline_text(item, "bold"))
    else:
        head = Text.assemble(("✘ Not quite", "bold red"), "  The answer: ", inline_text(verdict.expected, "bold"))
    if verdict.note:
        head.append(f"\n({verdict.note})", style="dim")
    return head


class QuestionPanel(VerticalScroll):
    """Scrolls when the prompt, the answer and the explanation outgrow the screen."""

    async def ask(self, question: Question, answer: Widget, *, meta: str, hint: str) -> None:
        """Clear the pane and ask `question`, to be answered in `answer` (the caller gives it the focus)."""
        await self.remove_children()
        await self.mount(Static(meta, classes="quiz-meta"), CodeMarkdown(question.prompt, id="prompt"),
                         Static(hint, id="question-hint", classes="dim quiz-hint"), answer)
        self.scroll_home(animate=False)

    async def show_feedback(self, question: Question, verdict: Verdict, response) -> Static:
        """Below the answer: the verdict, why the wrong pick is wrong, the explanation, then why the other
        wrong choices are; returns the verdict's line, for the caller to bring into view once laid out."""
        verdict_line = Static(verdict_text(question, verdict), id="verdict")
        picked, others = why_not_lines(question, response)
        await self.mount(verdict_line)
        if picked:
            await self.show_markdown(why_not_markdown(picked, "Why not"), "why-not-picked")
        await self.show_markdown(question.explanation, "explanation")
        if others:
            heading = "The other wrong choices" if picked else "Why the other choices are wrong"
            await self.show_markdown(why_not_markdown(others, heading), "why-not-others")
        return verdict_line

    async def show_markdown(self, source: str, id: str) -> None:
        # Markdown lays itself out in the background; a scroll to what comes below needs its height.
        markdown = CodeMarkdown(id=id)
        await self.mount(markdown)
        await markdown.update(source)
