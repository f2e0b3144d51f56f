"""One question as the two sides of a flashcard, in HTML: what is asked, then what the answer is and why.

Every question type becomes a card a learner can answer in their head: choices are listed with
letters (in a fixed shuffled order, so the right one is not always first), an order question shows
its steps scrambled, and the back gives the answer, the explanation, and why the wrong choices are wrong.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache

from quizapp.bank.answers import accepted_range
from quizapp.bank.kinds import kind_of
from quizapp.bank.model import Question
from quizapp.bank.shuffle import choice_order, item_order

# The seed of the shown order: fixed, so a re-export keeps each card as the learner knows it.
SHOWN_ORDER_SEED = "anki"


@dataclass(frozen=True)
class NoteSides:
    front: str
    back: str


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    # Raw HTML in a question pack is shown as text, never run as markup inside Anki.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_html(text: str) -> str:
    return _markdown().render(text).strip()


def _letter(position: int) -> str:
    return chr(ord("A") + position)


def _list(items: list[str], tag: str = "ul", css: str = "") -> str:
    attrs = f' class="{css}"' if css else ""
    return f"<{tag}{attrs}>" + "".join(f"<li>{item}</li>" for item in items) + f"</{tag}>"


def _inline(text: str) -> str:
    """Markdown for a single line (a choice, a step): no wrapping paragraph."""
    return _markdown().renderInline(text)


def front_html(question: Question, topic_title: str) -> str:
    parts = [f'<div class="topic">{html.escape(topic_title)}</div>', f'<div class="prompt">{markdown_html(question.prompt)}</div>',
             f'<div class="ask">{kind_of(question.type).ask}</div>']
    if question.type in ("single", "multi"):
        order = choice_order(question, SHOWN_ORDER_SEED)
        parts.append(_list([f"<b>{_letter(pos)}.</b> {_inline(question.choices[i])}" for pos, i in enumerate(order)],
                           css="choices"))
    elif question.type == "order":
        order = item_order(question, SHOWN_ORDER_SEED)
        parts.append(_list([_inline(question.items[i]) for i in order], css="steps"))
    return "\n".join(parts)


def answer_html(question: Question) -> str:
    """The right answer alone, as the learner would say it."""
    if question.type in ("single", "multi"):
        order = choice_order(question, SHOWN_ORDER_SEED)
        right = {question.answer} if question.type == "single" else set(question.answer)
        lines = [f"<b>{_letter(pos)}.</b> {_inline(question.choices[i])}" for pos, i in enumerate(order) if i in right]
        return _list(lines, css="answer")
    if question.type == "numeric":
        value = f"{question.answer:g}"
        span = accepted_range(question.answer, question.tolerance) if question.tolerance else None
        within = f" (accepted: {span[0]} to {span[1]})" if span else ""
        return f'<div class="answer"><b>{html.escape(value)}</b>{html.escape(within)}</div>'
    if question.type == "order":
        return _list([_inline(item) for item in question.items], tag="ol", css="answer")
    if question.type == "text":
        accepted = [f"<b>{html.escape(a)}</b>" for a in question.answer]
        lead = "Answer: " if len(accepted) == 1 else "Accepted answers: "
        return f'<div class="answer">{lead}{", ".join(accepted)}</div>'
    if question.key_points:  # a card: the points a good answer covers, before the model answer
        return '<div class="keypoints-title">A good answer covers</div>' + _list(
            [_inline(point) for point in question.key_points], css="answer keypoints")
    return ""


def back_html(question: Question) -> str:
    """The answer side below the question (the note type's back template shows the front above it)."""
    parts = [answer_html(question),
             f'<div class="explanation">{markdown_html(question.explanation)}</div>']
    if question.why_not:
        order = choice_order(question, SHOWN_ORDER_SEED)
        position = {i: pos for pos, i in enumerate(order)}
        lines = [f"<b>{_letter(position[i])}.</b> {_inline(text)}" for i, text in sorted(question.why_not.items(),
                                                                                    key=lambda kv: position[kv[0]])]
        parts.append('<div class="whynot-title">Why not the others</div>' + _list(lines, css="whynot"))
    return "\n".join(part for part in parts if part)


def note_sides(question: Question, topic_title: str) -> NoteSides:
    return NoteSides(front=front_html(question, topic_title), back=back_html(question))
