"""Validation of question packs: one test per kind of error, each with its file:line."""

from __future__ import annotations

import pytest

from quizapp.bank import load_bank, load_file

GOOD = """
topic: demo
title: Demo topic
questions:
  - id: demo-single
    type: single
    difficulty: 1
    prompt: Pick one.
    choices: [a, b, c]
    answer: 2
    explanation: c is right.
  - id: demo-multi
    type: multi
    difficulty: 2
    prompt: Pick some.
    choices: [a, b, c]
    answer: [0, 2]
    explanation: a and c.
  - id: demo-numeric
    type: numeric
    difficulty: 2
    prompt: float16 max?
    answer: 65504
    tolerance: 0.001
    explanation: The max is 65504.
  - id: demo-text
    type: text
    difficulty: 1
    prompt: Name the format.
    answer: [bfloat16, bf16]
    explanation: bfloat16.
  - id: demo-order
    type: order
    difficulty: 3
    prompt: Order them.
    items: [scale, backward, unscale, step, update]
    explanation: That order.
  - id: demo-card
    type: card
    difficulty: 3
    prompt: Explain loss scaling.
    explanation: The model answer.
    tags: [fp16, grad-scaler]
"""


def errors_of(path):
    topic, errors = load_file(path)
    return [str(e) for e in errors]


def only_error(path) -> str:
    errors = errors_of(path)
    assert len(errors) == 1, errors
    return errors[0]


def test_good_pack_loads_every_type(write_pack):
    path = write_pack(GOOD)
    topic, errors = load_file(path)
    assert errors == []
    assert [q.type for q in topic.questions] == ["single", "multi", "numeric", "text", "order", "card"]
    multi = topic.questions[1]
    assert multi.answer == (0, 2) and multi.line == 11
    assert topic.questions[5].tags == ("fp16", "grad-scaler")


def test_unknown_key(write_pack):
    path = write_pack(GOOD.replace("    tolerance: 0.001\n", "    tolerance: 0.001\n    hint: no such key\n"))
    assert only_error(path) == f"{path}:24: unknown key 'hint' in a numeric question (allowed: answer, difficulty, explanation, id, prompt, tags, tolerance, type)"


def test_key_of_another_type(write_pack):
    path = write_pack(GOOD.replace("    answer: 65504\n", "    answer: 65504\n    choices: [a, b]\n"))
    assert only_error(path) == f"{path}:23: key 'choices' is not allowed in a numeric question"


def test_missing_key(write_pack):
    path = write_pack(GOOD.replace("    explanation: c is right.\n", ""))
    assert only_error(path) == f"{path}:4: question 'demo-single': missing key 'explanation'"


def test_missing_top_level_key(write_pack):
    path = write_pack(GOOD.replace("title: Demo topic\n", ""))
    assert only_error(path) == f"{path}:1: missing key 'title' at the top of the file"


@pytest.mark.parametrize("old,new,line,reason", [
    ("difficulty: 1\n    prompt: Pick one.", "difficulty: easy\n    prompt: Pick one.", 6,
     "question 'demo-single': difficulty must be 1, 2 or 3, got 'easy'"),
    ("answer: 2\n", "answer: two\n", 9,
     "question 'demo-single': answer must be a 0-based index (an integer), got text"),
    ("choices: [a, b, c]\n    answer: 2", "choices: a b c\n    answer: 2", 8,
     "question 'demo-single': choices must be a list, got text"),
    ("answer: 65504", "answer: yes", 22,
     "question 'demo-numeric': answer of a numeric question must be a finite number, got a boolean (yes/no/true/false; quote it if you meant text)"),
    ("prompt: Explain loss scaling.", "prompt: [not, text]", 40,
     "question 'demo-card': prompt must be text, got a list"),
    ("type: card", "type: essay", 38,
     "question 'demo-card': type must be one of single, multi, numeric, order, text, card, got 'essay'"),
])
def test_bad_type(write_pack, old, new, line, reason):
    path = write_pack(GOOD.replace(old, new, 1))
    assert only_error(path) == f"{path}:{line}: {reason}"


def test_answer_index_out_of_range(write_pack):
    path = write_pack(GOOD.replace("answer: 2\n", "answer: 3\n"))
    assert only_error(path) == f"{path}:9: question 'demo-single': answer 3 is out of range: there are 3 choices (0 to 2)"


def test_multi_answer_index_out_of_range(write_pack):
    path = write_pack(GOOD.replace("answer: [0, 2]", "answer: [0, 5]"))
    assert only_error(path) == f"{path}:16: question 'demo-multi': answer[1] 5 is out of range: there are 3 choices (0 to 2)"


def test_too_many_choices(write_pack):
    path = write_pack(GOOD.replace("choices: [a, b, c]\n    answer: 2", "choices: [a, b, c, d, e, f, g, h, i]\n    answer: 2"))
    assert only_error(path) == f"{path}:8: question 'demo-single': choices must have 2 to 8 entries, has 9"


def test_duplicate_id_in_one_file(write_pack):
    path = write_pack(GOOD.replace("id: demo-multi", "id: demo-single"))
    assert only_error(path) == f"{path}:11: duplicate id 'demo-single' (first at line 4)"


def test_duplicate_id_across_files_names_both(write_pack):
    first = write_pack(GOOD, "a.yaml")
    second = write_pack(GOOD.replace("topic: demo", "topic: other"), "b.yaml")
    bank = load_bank([first, second])
    assert "demo" in bank.topics and "other" not in bank.topics
    assert f"{second}:4: duplicate id 'demo-single': already used at {first}:4" in [str(e) for e in bank.errors]


def test_yaml_syntax_error_has_line(write_pack):
    path = write_pack(GOOD.replace("    prompt: Pick some.", "    prompt: [unclosed"))
    error = only_error(path)
    assert error.startswith(f"{path}:")
    assert "YAML syntax error" in error
    line = int(error.split(":")[1])
    assert path.read_text().splitlines()[line - 1] == "    prompt: [unclosed"  # where the list opens


def test_empty_file(write_pack):
    path = write_pack("# just a comment\n")
    assert only_error(path) == f"{path}:1: empty file: expected the keys topic, title and questions"


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("topic: demo\ntitle: Caf\xe9\n".encode("latin-1"))
    assert only_error(path) == f"{path}:2: not UTF-8: byte 0xe9 at offset 22; save the file as UTF-8"


def test_folder_instead_of_file(tmp_path):
    assert only_error(tmp_path) == f"{tmp_path}:1: is a folder, not a question file"


def test_every_error_in_every_file_is_reported(write_pack):
    bad_one = write_pack(GOOD.replace("answer: 2\n", "answer: 9\n").replace("type: card", "type: essay"), "one.yaml")
    bad_two = write_pack("topic: two\n", "two.yaml")
    good = write_pack(GOOD.replace("topic: demo", "topic: fine").replace("id: demo-", "id: fine-"), "three.yaml")
    bank = load_bank([bad_one, bad_two, good])
    assert {e.path for e in bank.errors} == {bad_one, bad_two}
    assert len([e for e in bank.errors if e.path == bad_one]) == 2
    assert len([e for e in bank.errors if e.path == bad_two]) == 2  # title and questions missing
    assert list(bank.topics) == ["fine"] and len(bank.questions) == 6


def test_user_pack_clashing_with_shipped_bank(write_pack, quizapp_home):
    from quizapp.bank import default_pack_files

    shipped = load_bank()
    assert shipped.questions, "the shipped bank is empty"
    taken = next(iter(shipped.questions.values()))
    user_pack = write_pack(GOOD.replace("id: demo-single", f"id: {taken.id}"), "mine.yaml", quizapp_home / "questions")
    assert user_pack in default_pack_files()
    bank = load_bank()
    assert f"{user_pack}:4: duplicate id '{taken.id}': already used at {taken.source}:{taken.line}" in map(str, bank.errors)
    assert "demo" not in bank.topics  # the clashing pack is left out, the shipped bank stays whole
    assert len(bank.questions) == len(shipped.questions)


def test_user_pack_loads_beside_the_shipped_bank(write_pack, quizapp_home):
    write_pack(GOOD, "mine.yaml", quizapp_home / "questions")
    bank = load_bank()
    assert not bank.errors
    assert "demo" in bank.topics and "demo-card" in bank.questions


# -- optional keys: why_not (single/multi) and key_points (card) ---------------------------

WHY_NOT = "    answer: 2\n    why_not:\n      0: a is the float16 range.\n      1: b ignores the scale.\n"
KEY_POINTS = "    explanation: The model answer.\n    key_points:\n      - scale the loss\n      - unscale before clipping\n"


def test_why_not_and_key_points_load(write_pack):
    text = GOOD.replace("    answer: 2\n", WHY_NOT, 1).replace("    explanation: The model answer.\n", KEY_POINTS)
    topic, errors = load_file(write_pack(text))
    assert errors == []
    single, card = topic.questions[0], topic.questions[5]
    assert single.why_not == {0: "a is the float16 range.", 1: "b ignores the scale."}
    assert card.key_points == ("scale the loss", "unscale before clipping")
    assert topic.questions[1].why_not == {} and topic.questions[3].key_points == ()


@pytest.mark.parametrize("lines,line,reason", [
    ("      2: c is wrong?\n", 13, "question 'demo-single': why_not names choice 2, which is a right answer"),
    ("      7: no such choice\n", 13, "question 'demo-single': why_not key 7 is out of range: there are 3 choices (0 to 2)"),
    ("      0: again\n", 13, "question 'demo-single': why_not lists choice 0 twice"),
    ("      one: words\n", 13, "question 'demo-single': why_not key must be a 0-based index (an integer), got text"),
])
def test_bad_why_not(write_pack, lines, line, reason):
    path = write_pack(GOOD.replace("    answer: 2\n", WHY_NOT + lines, 1))
    assert only_error(path) == f"{path}:{line}: {reason}"


def test_why_not_must_be_a_mapping(write_pack):
    path = write_pack(GOOD.replace("    answer: 2\n", "    answer: 2\n    why_not: [a, b]\n", 1))
    assert only_error(path) == f"{path}:10: question 'demo-single': why_not must be a mapping of choice index to text, got a list"


def test_key_points_only_on_cards(write_pack):
    path = write_pack(GOOD.replace("    answer: 2\n", "    answer: 2\n    key_points: [x]\n", 1))
    assert only_error(path) == f"{path}:10: key 'key_points' is not allowed in a single question"


def test_key_points_must_be_a_list_of_text(write_pack):
    path = write_pack(GOOD.replace("    explanation: The model answer.\n",
                                   "    explanation: The model answer.\n    key_points: []\n"))
    assert only_error(path) == f"{path}:42: question 'demo-card': key_points must have 1 to 8 entries, has 0"


# -- where a YAML syntax error points -------------------------------------------------------

def test_an_unclosed_quote_points_where_the_quote_opens_not_past_the_end(write_pack):
    text = GOOD.replace("    prompt: Pick some.", '    prompt: "Pick some.')
    path = write_pack(text)
    opened = next(n for n, line in enumerate(path.read_text().splitlines(), 1) if 'prompt: "Pick some.' in line)
    error = only_error(path)
    assert error.startswith(f"{path}:{opened}: YAML syntax error: the quoted text that starts here is never closed")
    assert "(at the end of the file)" in error


def test_an_unclosed_list_points_where_it_opens(write_pack):
    path = write_pack(GOOD.replace("    tags: [fp16, grad-scaler]", "    tags: [fp16, grad-scaler"))
    last = len(path.read_text().splitlines())
    assert only_error(path).startswith(f"{path}:{last}: YAML syntax error: the [ list that starts here is not closed")
    path = write_pack(GOOD.replace("    choices: [a, b, c]\n    answer: 2", "    choices: [a, b, c\n    answer: 2"))
    assert only_error(path).startswith(f"{path}:8: YAML syntax error: the [ list")
    assert "(at line 9)" in only_error(path)


def test_a_misindented_key_still_points_at_its_own_line(write_pack):
    path = write_pack(GOOD.replace("    difficulty: 2\n    prompt: Pick some.", "    difficulty: 2\n   prompt: Pick some."))
    assert only_error(path).startswith(f"{path}:14: YAML syntax error:")


@pytest.mark.parametrize("broken", ['a: "x\n', "a: 'x\n\n\n", "a: [x,\n", "a: {x: 1\n", 'a: "x', "a:\n  - [\n"])
def test_a_syntax_error_never_points_past_the_last_line(write_pack, broken):
    path = write_pack("topic: demo\ntitle: Demo\n" + broken)
    line = int(only_error(path).split(":")[1])
    assert 3 <= line <= len(path.read_text().splitlines())
