"""`quizapp export anki`: the .apkg opened back with sqlite3 holds one note per question, with stable ids."""

from __future__ import annotations

import json
import sqlite3
import zipfile

from click.testing import CliRunner

from quizapp.bank.load import load_bank
from quizapp.cli import cli
from quizapp.export.anki import note_guid, write_apkg
from quizapp.export.notes import note_sides

PACK = """
topic: demo-topic
title: Demo topic
questions:
  - id: demo-single
    type: single
    difficulty: 1
    prompt: Which is **right**?
    choices: [wrong one, right one, "<script>x</script>"]
    answer: 1
    why_not: {0: "it is wrong", 2: "not this"}
    explanation: Because.
    tags: [mixed-precision, fp16]
  - id: demo-multi
    type: multi
    difficulty: 1
    prompt: Which two?
    choices: [a, b, c]
    answer: [0, 2]
    explanation: a and c.
  - id: demo-numeric
    type: numeric
    difficulty: 1
    prompt: How many?
    answer: 65504
    tolerance: 0.01
    explanation: That many.
  - id: demo-order
    type: order
    difficulty: 1
    prompt: Order them.
    items: [first, second, third]
    explanation: In this order.
  - id: demo-text
    type: text
    difficulty: 1
    prompt: Name it.
    answer: [bf16, bfloat16]
    explanation: Brain float.
  - id: demo-card
    type: card
    difficulty: 1
    prompt: Explain it.
    key_points: [one point, another point, a third point]
    explanation: |
      | col | val |
      |-----|-----|
      | a   | 1   |
"""


def open_collection(apkg, tmp_path):
    with zipfile.ZipFile(apkg) as zf:
        zf.extract("collection.anki2", tmp_path)
    return sqlite3.connect(tmp_path / "collection.anki2")


def test_one_note_per_question_with_stable_ids(tmp_path):
    bank = load_bank()
    first, second = tmp_path / "a.apkg", tmp_path / "b.apkg"
    summary = write_apkg(bank, first)
    write_apkg(bank, second)
    assert summary.notes == len(bank.questions) and summary.decks == len(bank.topics)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a, b = open_collection(first, tmp_path / "a"), open_collection(second, tmp_path / "b")
    guids = dict(a.execute("SELECT guid, sfld FROM notes"))
    assert len(guids) == len(bank.questions) == a.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    assert guids == {note_guid(qid): qid for qid in bank.questions}
    assert dict(b.execute("SELECT guid, sfld FROM notes")) == guids  # a re-export keeps every id
    assert a.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == len(bank.questions)
    decks = json.loads(a.execute("SELECT decks FROM col").fetchone()[0])
    names = {d["name"] for d in decks.values()}
    assert {f"quizapp::{t.title}" for t in bank.topics.values()} <= names
    assert json.loads(b.execute("SELECT decks FROM col").fetchone()[0]).keys() == decks.keys()
    models = json.loads(a.execute("SELECT models FROM col").fetchone()[0])
    assert models.keys() == json.loads(b.execute("SELECT models FROM col").fetchone()[0]).keys()


def test_every_type_renders_with_answer_and_explanation(tmp_path, write_pack):
    bank = load_bank([write_pack(PACK)])
    assert not bank.errors
    write_apkg(bank, tmp_path / "demo.apkg")
    conn = open_collection(tmp_path / "demo.apkg", tmp_path)
    notes = {sfld: (tags.split(), flds.split("\x1f")) for sfld, tags, flds in conn.execute("SELECT sfld, tags, flds FROM notes")}
    assert set(notes) == set(bank.questions)
    tags, (front, back, topic, qid) = notes["demo-single"]
    assert tags == ["demo-topic", "mixed-precision", "fp16"] and topic == "Demo topic" and qid == "demo-single"
    assert "<strong>right</strong>" in front and "Choose one." in front
    assert "&lt;script&gt;" in front and "<script>" not in front  # pack text is never live markup
    assert "right one" in back and "wrong one" not in back.split("Why not")[0] and "it is wrong" in back
    assert "Because." in back
    _, (front, back, *_) = notes["demo-multi"]
    assert back.count("<li>") == 2 and "a and c." in back
    assert "<b>65504</b> (accepted: 64900 to 66100)" in notes["demo-numeric"][1][1]  # in its units, not "0.01 relative"
    _, (front, back, *_) = notes["demo-order"]
    assert back.index("first") < back.index("second") < back.index("third") and "<ol" in back
    assert front.index("first") > front.index("second") or front.index("second") > front.index("third")
    assert "bf16" in notes["demo-text"][1][1] and "bfloat16" in notes["demo-text"][1][1]
    _, (front, back, *_) = notes["demo-card"]
    assert "A good answer covers" in back and "another point" in back and "<table>" in back


def test_choices_keep_their_letters_between_front_and_back(write_pack):
    bank = load_bank([write_pack(PACK)])
    sides = note_sides(bank.questions["demo-single"], "Demo topic")
    letter = sides.front.split("right one")[0].rsplit("<b>", 1)[1][:2]
    assert f"<b>{letter}</b> right one" in sides.back


def test_cli_export_anki(tmp_path):
    out = tmp_path / "deck.apkg"
    result = CliRunner().invoke(cli, ["export", "anki", str(out)], catch_exceptions=False)
    assert result.exit_code == 0 and "notes in" in result.output and zipfile.is_zipfile(out)
    wrong = CliRunner().invoke(cli, ["export", "anki", str(tmp_path / "deck.zip")], catch_exceptions=False)
    assert wrong.exit_code == 1 and "ends in .apkg" in wrong.output and not (tmp_path / "deck.zip").exists()
