"""`quizapp search` and quizapp.bank.search: every word must match, in the prompt, the choices, the
explanation or the tags, case-insensitively; the best matches first."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from quizapp.bank import load_bank
from quizapp.bank.cache import load_bank_cached
from quizapp.bank.search import search
from quizapp.cli import cli

PACK = """
topic: {topic}
title: {title}
questions:
  - id: {p}-prompt
    type: single
    difficulty: 1
    prompt: Why does Loss Scaling help float16?
    choices: [underflow, overflow]
    answer: 0
    explanation: Small gradients underflow.
  - id: {p}-choice
    type: single
    difficulty: 1
    prompt: Which one?
    choices: [a gradient scaler, a zebra]
    answer: 0
    explanation: Nothing about it here.
  - id: {p}-explained
    type: card
    difficulty: 2
    prompt: Tell me about it.
    explanation: The GradScaler multiplies the loss by a scale.
  - id: {p}-tagged
    type: card
    difficulty: 2
    prompt: Another one.
    explanation: Model answer.
    tags: [fp16, bf16]
"""


def pack(write_pack, topic="demo", title="Demo", p="s", folder=None):
    return write_pack(PACK.format(topic=topic, title=title, p=p), f"{topic}.yaml", folder)


def ids(hits) -> list[str]:
    return [h.question.id for h in hits]


def test_finds_by_prompt_choice_explanation_and_tag_words(write_pack):
    bank = load_bank([pack(write_pack)])
    assert ids(search(bank, "loss scaling")) == ["s-prompt"]
    assert ids(search(bank, "ZEBRA")) == ["s-choice"]
    assert ids(search(bank, "multiplies")) == ["s-explained"]
    assert ids(search(bank, "bf16")) == ["s-tagged"]
    assert ids(search(bank, "loss zebra")) == []  # every word must match one question
    assert ids(search(bank, "")) == ["s-prompt", "s-choice", "s-explained", "s-tagged"]


def test_ranks_a_prompt_or_whole_word_above_a_passing_mention(write_pack):
    bank = load_bank([pack(write_pack)])
    # "loss": whole in s-prompt's prompt (3, doubled) and in s-explained's explanation (1, doubled)
    assert [(h.question.id, h.score) for h in search(bank, "loss")] == [("s-prompt", 6.0), ("s-explained", 2.0)]
    # "scale": inside "scaler" of s-choice's choices (2), whole in s-explained's explanation (1 x 2): a tie
    # keeps the bank's order
    assert [(h.question.id, h.score) for h in search(bank, "scale")] == [("s-choice", 2.0), ("s-explained", 2.0)]
    # words add up: "gradient": whole in s-choice's choices (4), inside "gradients" of s-prompt's explanation (1)
    assert [(h.question.id, h.score) for h in search(bank, "gradient")] == [("s-choice", 4.0), ("s-prompt", 1.0)]


def test_filters_by_topic(write_pack):
    bank = load_bank([pack(write_pack), pack(write_pack, "other", "Other", "o")])
    assert ids(search(bank, "zebra")) == ["s-choice", "o-choice"]
    assert ids(search(bank, "zebra", topic="other")) == ["o-choice"]


def test_the_command_prints_json_and_a_list(write_pack, quizapp_home):
    pack(write_pack, folder=quizapp_home / "questions")
    result = CliRunner().invoke(cli, ["search", "zebra", "--topic", "demo", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output) == [{"id": "s-choice", "topic": "demo", "type": "single",
                                          "prompt": "Which one?"}]
    shown = CliRunner().invoke(cli, ["search", "loss", "scaling", "--topic", "demo"])
    assert "1 question for 'loss scaling'" in shown.output and "s-prompt" in shown.output
    none = CliRunner().invoke(cli, ["search", "nothing-like-this"])
    assert none.exit_code == 0 and "No question" in none.output
    bad = CliRunner().invoke(cli, ["search", "x", "--topic", "nope"])
    assert bad.exit_code == 2 and "no topic 'nope'" in bad.output


def test_the_shipped_bank_answers_in_well_under_100_ms():
    bank = load_bank_cached()
    assert len(bank.questions) > 300
    search(bank, "warm")  # the first search lowers the bank's text once
    start = time.perf_counter()
    for query in ("loss scaling", "a", "gradient checkpointing memory"):
        search(bank, query)
    assert (time.perf_counter() - start) / 3 < 0.1
