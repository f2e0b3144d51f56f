"""Honest situations that went wrong (issue 23): hostile question packs, progress files and store
states are reported as what they are, in bounded time and memory, and nothing is lost or overwritten."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_bank_validation import GOOD

from quizapp.bank import load_bank, load_file
from quizapp.cli import cli
from quizapp.commands import review as review_module
from quizapp.study.schedule import record_review, replay_card
from quizapp.study.store import Store, StoreFailed

REPO = Path(__file__).resolve().parent.parent


def run(*args, stdin: str | None = None):
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def in_child(code: str, *, env: dict | None = None, timeout: float = 60,
             memory: int = 1536 * 2**20) -> subprocess.CompletedProcess:
    """Run Python code in a child limited to `memory` bytes of address space, so that a regression
    fails with a MemoryError instead of taking the machine's memory."""
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


# -- question packs: alias bombs, values that contain themselves, deep nesting, long values ----------

def alias_bomb(key: str) -> str:
    """A question whose `key` holds the classic "billion laughs": 9 lists of 9 aliases, 9 deep."""
    levels = ["&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    fields = {"type": "single", "difficulty": "1", "choices": "[a, b]", "answer": "0"}
    if key == "tolerance":
        fields = {"type": "numeric", "difficulty": "1", "answer": "1"}
    fields[key] = "[" + ", ".join(levels) + "]"
    lines = [f"    {name}: {value}" for name, value in fields.items()]
    return ("topic: bomb\ntitle: Bomb\nquestions:\n  - id: bomb-one\n" + "\n".join(lines)
            + "\n    prompt: p\n    explanation: e\n")


MEASURE = """
import json, resource, sys, time, tracemalloc
from pathlib import Path
tracemalloc.start()
from quizapp.bank.load import load_file
started = time.perf_counter()
topic, errors = load_file(Path(sys.argv[1]) if len(sys.argv) > 1 else Path({path!r}))
elapsed = time.perf_counter() - started
print(json.dumps({{"errors": [str(e) for e in errors], "seconds": elapsed,
                  "peak": tracemalloc.get_traced_memory()[1]}}))
"""


@pytest.mark.parametrize("key", ["difficulty", "type", "tolerance"])
def test_an_alias_bomb_is_refused_in_a_moment_and_little_memory(tmp_path, key):
    pack = tmp_path / "bomb.yaml"
    pack.write_text(alias_bomb(key), encoding="utf-8")
    assert pack.stat().st_size < 1300
    child = in_child(MEASURE.format(path=str(pack)))
    assert child.returncode == 0, child.stderr[-2000:]
    found = json.loads(child.stdout)
    line = next(n for n, text in enumerate(pack.read_text().splitlines(), 1) if text.startswith(f"    {key}:"))
    assert found["errors"] and found["errors"][0].startswith(f"{pack}:{line}: this value expands to ")
    assert "anchors and aliases" in found["errors"][0]
    assert found["seconds"] < 2
    assert found["peak"] < 20 * 2**20
    assert all(len(error) < 400 for error in found["errors"])


def test_list_with_an_alias_bomb_among_the_learners_packs(tmp_path, quizapp_home):
    (quizapp_home / "questions").mkdir(parents=True)
    (quizapp_home / "questions" / "bomb.yaml").write_text(alias_bomb("difficulty"), encoding="utf-8")
    code = "import sys; from quizapp.cli import cli; sys.argv = ['quizapp', 'list']; cli()"
    started = time.monotonic()
    child = in_child(code, env={"QUIZAPP_HOME": str(quizapp_home)})
    assert time.monotonic() - started < 20
    assert child.returncode == 0, child.stderr[-2000:]
    assert "bomb.yaml:6: this value expands to " in child.stderr
    assert "Question topics" in child.stdout


def test_a_value_that_contains_itself_is_an_error_at_its_line(write_pack):
    pack = write_pack(GOOD.replace("    difficulty: 1\n", "    difficulty: &me [1, *me]\n", 1))
    errors = [str(e) for e in load_file(pack)[1]]
    assert errors == [f"{pack}:6: an alias here refers to the value it is inside of (a value that contains itself)"]


def test_values_nested_too_deep_are_an_error_at_their_line(write_pack):
    pack = write_pack(GOOD.replace("    difficulty: 1\n", "    difficulty: " + "[" * 100 + "]" * 100 + "\n", 1))
    errors = [str(e) for e in load_file(pack)[1]]
    assert errors == [f"{pack}:6: values are nested more than 64 levels deep here"]


def test_long_or_large_values_are_quoted_short(write_pack):
    pack = write_pack(GOOD.replace("    difficulty: 1\n", "    difficulty: " + "x" * 100_000 + "\n", 1)
                      .replace("type: single", "type: [single, multi]", 1))
    errors = [str(e) for e in load_file(pack)[1]]
    assert f"{pack}:5: question 'demo-single': type must be one of single, multi, numeric, order, text, card, " \
           "got a list of 2 entries" in errors
    difficulty = next(e for e in errors if "difficulty" in e)
    assert difficulty.endswith("... (100,000 characters)") and len(difficulty) < 300


# -- bank check: only regular files of a sane size are read ---------------------------------------

def check_in_child(path: Path) -> subprocess.CompletedProcess:
    code = f"import sys; from quizapp.cli import cli; sys.argv = ['quizapp', 'bank', 'check', {str(path)!r}]; cli()"
    return in_child(code, timeout=30)


@pytest.mark.parametrize("kind", ["symlink loop", "fifo", "device", "too big"])
def test_bank_check_of_a_file_it_must_not_read(tmp_path, kind):
    path = tmp_path / "pack.yaml"
    if kind == "symlink loop":
        path.symlink_to(path)
        reason = "a symbolic link that loops (it leads back to itself)"
    elif kind == "fifo":
        os.mkfifo(path)
        reason = "is a named pipe (FIFO), not a question file; only regular files are read"
    elif kind == "device":
        path = Path("/dev/zero")
        reason = "is a device, not a question file; only regular files are read"
    else:
        path.write_bytes(b"# a comment\n" * 600_000)
        reason = "is 6.9 MB; a question file may be at most 5 MB"
    child = check_in_child(path)  # a read of a FIFO or /dev/zero would block or fill memory: 30 s at most
    assert child.returncode == 1, child.stderr[-2000:]
    assert f"{path}:1: {reason}" in child.stdout.splitlines()
    assert "Traceback" not in child.stderr


def test_a_pack_that_is_the_progress_database_is_never_opened(quizapp_home):
    with Store.open():
        pass
    (quizapp_home / "questions").mkdir()
    link = quizapp_home / "questions" / "db.yaml"
    link.symlink_to(quizapp_home / "progress.sqlite3")
    errors = [str(e) for e in load_file(link)[1]]
    assert errors == [f"{link}:1: this is quizapp's progress database, not a question file"]


# -- import: values no store can take -------------------------------------------------------------

def studied(quizapp_home) -> Path:
    """A store with answers on the demo pack, a grade and an interview; returns its export."""
    from datetime import datetime, timezone

    (quizapp_home / "questions").mkdir(parents=True, exist_ok=True)
    (quizapp_home / "questions" / "demo.yaml").write_text(textwrap.dedent(GOOD).lstrip(), encoding="utf-8")
    bank = load_bank()
    with Store.open() as store:
        for qid in ("demo-single", "demo-text", "demo-card"):
            record_review(store, bank.questions[qid], rating=3, correct=True, response="x")
        store.record_grade("amp_training", status="fail", checks_passed=3, checks_total=8, duration_s=1.0,
                           report={"status": "fail"})
        now = datetime.now(timezone.utc)
        store.record_interview(started_at=now, finished_at=now, minutes=5, score=0.5, report={"a": 1})
    out = quizapp_home.parent / "export.json"
    assert run("export", "json", str(out)).exit_code == 0
    return out


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


HOSTILE = {
    # name: (section, index, field, JSON text of the value, what the message says)
    "huge whole number": ("answers", 0, "duration_ms", str(10**30), "answers[0].duration_ms must be a whole number"),
    "over 64 bits": ("grades", 0, "checks_passed", str(2**64), "grades[0].checks_passed must be a whole number"),
    "huge number": ("grades", 0, "duration_s", "1" + "0" * 400, "grades[0].duration_s must be a number"),
    "huge minutes": ("interviews", 0, "minutes", "1" + "0" * 400, "interviews[0].minutes must be a number"),
    "year 1": ("answers", 1, "answered_at", '"0001-01-01T00:00:00+01:00"', "answers[1].answered_at must be a time from"),
    "year 9999": ("grades", 0, "graded_at", '"9999-12-31T23:59:59-01:00"', "grades[0].graded_at must be a time from"),
    "far future": ("answers", 2, "answered_at", '"9999-06-01T00:00:00+00:00"', "answers[2].answered_at must be a time"),
    "nested": ("answers", 0, "response", deep(100), "answers[0].response must not nest more than 64 levels"),
    "nested beyond reading": ("answers", 0, "response", deep(100_000), "damaged: values nested too deeply to read"),
    "report nested": ("interviews", 0, "report", '{"a": ' + deep(80) + "}", "interviews[0].report must not nest"),
    "thousands of digits": ("answers", 0, "rating", "9" * 5000, "damaged: a number thousands of digits long"),
    "lone surrogate": ("answers", 0, "question_id", '"demo-\\ud800"', "answers[0].question_id must be text without"),
    "parameters": (None, None, "fsrs_parameters", "[" + "1" * 400 + "]", '"fsrs_parameters" must be null or a list'),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_import_of_values_no_store_can_take_says_which_and_imports_nothing(quizapp_home, tmp_path, case):
    export = studied(quizapp_home)
    section, index, field, value, message = HOSTILE[case]
    document = json.loads(export.read_text(encoding="utf-8"))
    marker = "__HOSTILE__"
    if section is None:
        document[field] = marker
    else:
        document[section][index][field] = marker
    for record in document["answers"] + document["grades"] + document["interviews"]:
        record["uid"] = record["uid"][::-1]  # all new to the store: an import would add every one
    bad = tmp_path / "hostile.json"
    bad.write_text(json.dumps(document).replace(json.dumps(marker), value), encoding="utf-8")
    with Store.open() as store:
        before = (store.answer_count(), len(store.grades()), len(store.interviews()))
    result = run("import", str(bad))
    assert result.exit_code == 1, result.output
    assert str(bad) in result.stderr and message in result.stderr and "Nothing was imported." in result.stderr
    assert len(result.stderr) < 1000
    with Store.open() as store:
        assert (store.answer_count(), len(store.grades()), len(store.interviews())) == before


# -- export: never over the progress database -----------------------------------------------------

@pytest.mark.parametrize("target", ["database", "wal", "shm", "symlink", "hard link"])
def test_export_refuses_to_write_over_the_progress_database(quizapp_home, tmp_path, target):
    studied(quizapp_home)
    db = quizapp_home / "progress.sqlite3"
    path = {"database": db, "wal": db.with_name(db.name + "-wal"), "shm": db.with_name(db.name + "-shm"),
            "symlink": tmp_path / "progress.json", "hard link": tmp_path / "hard.json"}[target]
    if target == "symlink":
        path.symlink_to(db)
    elif target == "hard link":
        os.link(db, path)
    result = run("export", "json", str(path))
    assert result.exit_code == 1
    assert "that is your progress database itself" in result.stderr
    assert not path.with_name(path.name + ".part").exists()
    with Store.open() as store:
        assert store.answer_count() == 3


# -- review: a store that stays locked ------------------------------------------------------------

def review(stdin: str, monkeypatch):
    monkeypatch.setattr("quizapp.commands.review.choice_order", lambda q, seed: list(range(len(q.choices))))
    return run("review", "--topic", "demo", stdin=stdin)


def said(result) -> str:
    """The output with rich's line wrapping undone."""
    return " ".join(result.output.split())


def answers_stored() -> dict:
    with Store.open() as store:
        return {r["question_id"]: r["rating"] for r in store.answers()}


def test_review_while_another_process_holds_the_write_lock(quizapp_home, write_pack, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    with Store.open():
        pass
    monkeypatch.setattr("quizapp.study.store.BUSY_TIMEOUT_S", 0.2)  # the store's busy wait, shortened
    blocker = sqlite3.connect(quizapp_home / "progress.sqlite3", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the busy wait
    try:
        result = review("3\n\nn\n", monkeypatch)  # right answer, keep Good, then do not try again
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert result.exit_code == 1
    assert "Your answer was not saved: another process (the app, a grade, `watch`) held the progress database's " \
           "write lock" in said(result)
    assert "Try saving it again? [Y/n]" in said(result)
    assert "Not saved: your last answer (to demo-single) was not kept" in said(result)
    assert "Answered 0 of 6." in said(result)
    assert answers_stored() == {}


def test_review_saves_the_answer_when_trying_again_succeeds(quizapp_home, write_pack, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")
    calls = []

    def locked_once(*args, **kwargs):
        calls.append(kwargs.get("now"))
        if len(calls) == 1:
            raise StoreFailed(quizapp_home / "progress.sqlite3", sqlite3.OperationalError("database is locked"))
        return record_review(*args, **kwargs)

    monkeypatch.setattr(review_module, "record_review", locked_once)
    result = review("3\n\ny\nq\n", monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.output.count("Your answer was not saved") == 1
    assert answers_stored() == {"demo-single": 3}
    assert calls[0] == calls[1]  # saved at the moment it was answered


def test_review_quit_at_the_rating_then_a_refused_save_says_so(quizapp_home, write_pack, monkeypatch):
    write_pack(GOOD, "demo.yaml", quizapp_home / "questions")

    def locked(*args, **kwargs):
        raise StoreFailed(quizapp_home / "progress.sqlite3", sqlite3.OperationalError("database is locked"))

    monkeypatch.setattr(review_module, "record_review", locked)
    result = review("3\nq\n", monkeypatch)  # quit at the rating; end of input at "try again?"
    assert result.exit_code == 1
    assert "Not saved: your last answer (to demo-single) was not kept" in said(result)
    assert "Traceback" not in result.output


# -- damaged cards in the store -------------------------------------------------------------------

DAMAGE = {
    "not JSON": ("{not json", "not valid JSON"),
    "not an object": ("[]", "not a card (a JSON object)"),
    "missing fields": ('{"state": 2}', 'not a card: no "card_id"'),
    "naive date": (None, "a date is not an ISO 8601 time with its UTC offset"),
    "stability out of range": (None, "stability is not a number from 0 to 1e+06"),
}


def damage(store: Store, qid: str, case: str) -> None:
    value, _ = DAMAGE[case]
    if value is None:
        card = json.loads(store.card_json(qid))
        if case == "naive date":
            card["last_review"] = card["last_review"][:19]
        else:
            card["stability"] = 1e308
        value = json.dumps(card)
    with store.transaction() as conn:
        conn.execute("UPDATE cards SET card = ? WHERE question_id = ?", (value, qid))


@pytest.mark.parametrize("case", list(DAMAGE))
def test_list_stats_and_export_read_a_damaged_card_as_its_answers_rebuild_it(quizapp_home, tmp_path, case):
    studied(quizapp_home)
    with Store.open() as store:
        sound = json.loads(store.card_json("demo-text"))
        damage(store, "demo-text", case)
    why = DAMAGE[case][1]
    for args in (("list",), ("stats",), ("export", "json", str(tmp_path / "out.json"))):
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert result.stderr.count("damaged") == 1 and f"demo-text: {why}" in result.stderr
    assert "Demo topic" in run("stats").output and "3/6" in run("stats").output  # still seen, from its answers
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert len(document["answers"]) == 3
    rebuilt = next(c["card"] for c in document["cards"] if c["question_id"] == "demo-text")
    rebuilt.pop("card_id"), sound.pop("card_id")
    assert rebuilt == sound  # one review, replayed: the card it gave when it was made


def test_a_damaged_card_without_answers_counts_as_unseen(quizapp_home):
    studied(quizapp_home)
    with Store.open() as store, store.transaction() as conn:
        conn.execute("INSERT INTO cards (question_id, topic, due, card, reviewed_at) VALUES"
                     " ('demo-order', 'demo', '2026-01-01T00:00:00+00:00', 'garbage', '2026-01-01T00:00:00+00:00')")
    result = run("stats")
    assert result.exit_code == 0 and "3/6" in result.output and "demo-order: not valid JSON" in result.stderr


def test_review_of_a_damaged_card_saves_a_sound_one(quizapp_home, monkeypatch):
    studied(quizapp_home)
    with Store.open() as store:
        damage(store, "demo-single", "not JSON")
        with store.transaction() as conn:  # due now, so the session starts with it
            conn.execute("UPDATE cards SET due = '2000-01-01T00:00:00+00:00' WHERE question_id = 'demo-single'")
    result = review("3\n\nq\n", monkeypatch)
    assert result.exit_code == 0, result.output
    from quizapp.study.cards import card_problem

    with Store.open() as store:
        card = store.card_json("demo-single")
        rows = [r for r in store.answers() if r["question_id"] == "demo-single"]
    assert card_problem(card) is None and len(rows) == 2
    from datetime import datetime

    expected, _ = replay_card("demo-single", [(datetime.fromisoformat(r["answered_at"]), r["rating"]) for r in rows])
    card, expected = json.loads(card), json.loads(expected)
    card.pop("card_id"), expected.pop("card_id")
    assert card == expected
