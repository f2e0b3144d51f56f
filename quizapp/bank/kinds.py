"""What each question type is called and how it is answered: the one table the quiz, the mock
interview, the report card and the Anki export read. Never imports textual."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QuestionKind:
    label: str  # on the quiz's question line: "a short answer"
    short: str  # in the report card's column and the interview's question line: "short answer"
    ask: str  # on the front of an exported flashcard, under the prompt
    hint: str  # under the prompt in the app: how to answer ("" where the answer widget says it itself)
    empty: str = "Answer first."  # the notice when an answer is checked before one is given


QUESTION_KINDS = {
    "single": QuestionKind("one answer", "one answer", "Choose one.", "Pick with 1-9 or ↑↓, then Enter.",
                           "Pick a choice first (1-9, or ↑↓)."),
    "multi": QuestionKind("all that apply", "all that apply", "Choose all that apply.",
                          "Toggle with 1-9 (or ↑↓ and space), then Enter.",
                          "Pick at least one choice (1-9, or space)."),
    "numeric": QuestionKind("a number", "number", "Answer with a number.", "Type a number, then Enter.",
                            "Type a number first."),
    "text": QuestionKind("a short answer", "short answer", "Answer in a word or a short phrase.",
                         "Type your answer, then Enter.", "Type an answer first."),
    # An order answer always has an order and a card needs none: neither is ever empty.
    "order": QuestionKind("put in order", "order", "Put these steps in order.",
                          "Put the items in order: ↑↓ to pick an item, shift+↑↓ (or u/d) to move it, "
                          "then Enter."),
    "card": QuestionKind("open question", "open", "Answer in your own words.", ""),
}


def kind_of(question_type: str) -> QuestionKind:
    """The type's entry; a type this table lacks goes by its own name, never a crash on a screen."""
    return QUESTION_KINDS.get(question_type) or QuestionKind(question_type, question_type, "", "")
