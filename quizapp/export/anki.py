"""`quizapp export anki`: the bank as an Anki package, one note per question, one subdeck per topic.

Ids are derived from question ids and topic slugs, never from the clock: importing a newer export
into Anki updates the notes it already has (Anki matches notes by guid) instead of adding copies.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import genanki

from quizapp.bank.model import Bank, Question
from quizapp.export.notes import note_sides

DECK_ROOT = "quizapp"
MODEL_NAME = "quizapp question"

_CSS = """
.card { font-family: sans-serif; font-size: 18px; text-align: left; max-width: 46em; margin: auto; }
.topic { font-size: 13px; color: #888; text-transform: uppercase; letter-spacing: .05em; }
.ask { font-style: italic; color: #666; margin: .5em 0; }
.answer { font-weight: normal; color: #1a7f37; }
.nightMode .answer { color: #6fdc8c; }
.explanation { margin-top: 1em; }
.whynot-title, .keypoints-title { margin-top: 1em; font-weight: bold; }
.whynot { color: #9a6700; }
pre { background: rgba(127, 127, 127, .12); padding: .5em; overflow-x: auto; }
code { font-size: 90%; }
"""


def stable_id(kind: str, name: str) -> int:
    """A positive 31-bit id from a name: the same on every export and every machine."""
    digest = hashlib.sha256(f"quizapp:{kind}:{name}".encode()).digest()
    return (int.from_bytes(digest[:4], "big") & 0x7FFFFFFF) or 1


def note_guid(question_id: str) -> str:
    return genanki.guid_for("quizapp", question_id)


def anki_tag(text: str) -> str:
    """Anki tags are split on spaces: keep each of ours one tag."""
    return re.sub(r"\s+", "_", text.strip())


_MODEL = genanki.Model(
    stable_id("model", MODEL_NAME),
    MODEL_NAME,
    fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Topic"}, {"name": "QuestionId"}],
    templates=[{
        "name": "Question",
        "qfmt": "{{Front}}",
        "afmt": '{{FrontSide}}<hr id="answer">{{Back}}',
    }],
    css=_CSS,
    sort_field_index=3,
)


@dataclass(frozen=True)
class AnkiExport:
    notes: int
    decks: int


def build_package(bank: Bank) -> tuple[genanki.Package, AnkiExport]:
    decks, notes = [], 0
    for slug, topic in sorted(bank.topics.items(), key=lambda item: item[1].title.lower()):
        deck = genanki.Deck(stable_id("deck", slug), f"{DECK_ROOT}::{topic.title}")
        for question in topic.questions:
            deck.add_note(_note(question, topic.title))
            notes += 1
        decks.append(deck)
    return genanki.Package(decks), AnkiExport(notes=notes, decks=len(decks))


def _note(question: Question, topic_title: str) -> genanki.Note:
    sides = note_sides(question, topic_title)
    tags = [anki_tag(question.topic)] + [anki_tag(t) for t in question.tags if t.strip()]
    return genanki.Note(model=_MODEL, fields=[sides.front, sides.back, topic_title, question.id],
                        tags=list(dict.fromkeys(tags)), guid=note_guid(question.id))


def write_apkg(bank: Bank, path: Path) -> AnkiExport:
    """Write the package atomically: a failed export never leaves half a deck where a good one was."""
    package, summary = build_package(bank)
    tmp = path.with_name(path.name + ".part")
    try:
        package.write_to_file(str(tmp))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return summary
