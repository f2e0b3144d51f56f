"""The start-up cache: used while its files are unchanged, rebuilt whenever anything differs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from test_bank_validation import GOOD

from quizapp import paths
from quizapp.bank import load_bank
from quizapp.bank.cache import load_bank_cached, load_outline_cached
from quizapp.filecache import cached


def counting_build(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_unchanged_files_are_not_read_again(tmp_path, quizapp_home):
    source = tmp_path / "a.yaml"
    source.write_text("one")
    build, calls = counting_build({"n": 1})
    assert cached("thing", [source], build, dict) == {"n": 1}
    assert cached("thing", [source], build, dict) == {"n": 1}
    assert len(calls) == 1
    assert (paths.cache_dir() / "thing.pickle").is_file()


def test_any_change_rebuilds(tmp_path, quizapp_home):
    source = tmp_path / "a.yaml"
    source.write_text("one")
    build, calls = counting_build({"n": 1})
    cached("thing", [source], build, dict)
    source.write_text("two, longer")  # size and time change
    cached("thing", [source], build, dict)
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched, same size
    cached("thing", [source], build, dict)
    cached("thing", [source, tmp_path / "new.yaml"], build, dict)  # a file more (missing, even)
    assert len(calls) == 4


def test_a_damaged_or_foreign_cache_is_rebuilt(tmp_path, quizapp_home):
    source = tmp_path / "a.yaml"
    source.write_text("one")
    build, calls = counting_build({"n": 1})
    cached("thing", [source], build, dict)
    entry = paths.cache_dir() / "thing.pickle"
    entry.write_bytes(b"\x80\x05 not a pickle at all")
    assert cached("thing", [source], build, dict) == {"n": 1}
    build_list, _ = counting_build([1, 2])
    assert cached("thing", [source], build_list, list) == [1, 2]  # the entry held another type
    assert len(calls) == 2


def test_an_unwritable_cache_dir_still_answers(tmp_path, quizapp_home):
    quizapp_home.mkdir(parents=True)
    (quizapp_home / "cache").write_text("a file where the folder should be")
    build, calls = counting_build({"n": 1})
    assert cached("thing", [], build, dict) == {"n": 1}
    assert cached("thing", [], build, dict) == {"n": 1}
    assert len(calls) == 2


def test_the_cached_bank_follows_an_edited_pack(write_pack, quizapp_home):
    path = write_pack(GOOD)
    assert "demo-single" in load_bank_cached([path]).questions
    path.write_text(GOOD.replace("id: demo-single", "id: demo-renamed"))
    bank = load_bank_cached([path])
    assert "demo-renamed" in bank.questions and "demo-single" not in bank.questions
    path.write_text(GOOD.replace("answer: 2\n", "answer: 9\n", 1))
    assert [e.reason for e in load_bank_cached([path]).errors] == [
        "question 'demo-single': answer 9 is out of range: there are 3 choices (0 to 2)"]  # kept and shown too


def test_a_second_start_parses_no_yaml(quizapp_home):
    """The first start fills the cache; the next one reads bank and catalog without PyYAML."""
    script = textwrap.dedent("""
        import sys
        from quizapp.bank.cache import load_bank_cached, load_outline_cached
        from quizapp.catalog import load_catalog_cached
        bank, catalog = load_bank_cached(), load_catalog_cached()
        print(len(bank.questions), len(catalog), "yaml" in sys.modules)
        """)
    env = {**os.environ, "QUIZAPP_HOME": str(quizapp_home)}
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    count, exercises, _ = first.stdout.split()
    assert int(count) >= 180 and int(exercises) >= 6
    assert second.stdout.split() == [count, exercises, "False"]


def test_a_changed_question_model_rebuilds_the_cached_bank(write_pack, quizapp_home, monkeypatch, tmp_path):
    """A checkout updated without a version bump must not unpickle questions of an older shape."""
    import quizapp.bank.cache as bank_cache

    model = tmp_path / "model.py"
    model.write_text("one shape")
    monkeypatch.setattr(bank_cache, "_CODE", [model])
    path = write_pack(GOOD)
    calls = []
    monkeypatch.setattr(bank_cache, "_load", lambda files: calls.append(1) or load_bank(files))
    load_bank_cached([path])
    load_bank_cached([path])
    model.write_text("another, longer shape")
    load_bank_cached([path])
    assert len(calls) == 2


def test_the_outline_follows_an_edited_pack_and_hands_over_the_bank_it_loaded(write_pack, quizapp_home):
    """The outline is what home draws; it must describe the same bank as the cached questions."""
    path = write_pack(GOOD)
    outline, loaded = load_outline_cached([path])
    bank = load_bank_cached([path])
    assert loaded is not None and outline == bank.outline() == loaded.outline()  # built now, from the bank
    assert [t.question_ids for t in outline.topics.values()] == [tuple(q.id for q in t.questions)
                                                                 for t in bank.topics.values()]
    again, loaded = load_outline_cached([path])
    assert again == outline and loaded is None  # from the cache: the questions were not loaded
    path.write_text(GOOD.replace("id: demo-single", "id: demo-renamed").replace("answer: 2\n", "answer: 9\n", 1))
    edited, loaded = load_outline_cached([path])
    assert loaded is not None and edited == load_bank_cached([path]).outline()
    assert "demo-single" not in edited.topic_of() and "demo-renamed" not in edited.topic_of()  # now broken
    assert (edited.error_count, edited.error_files) == (1, 1)


def test_a_second_start_reads_the_outline_without_the_question_model(quizapp_home):
    script = textwrap.dedent("""
        import sys
        from quizapp.bank.cache import load_outline_cached
        outline, loaded = load_outline_cached()
        print(sum(len(t.question_ids) for t in outline.topics.values()), loaded is None,
              "quizapp.bank.model" in sys.modules)
        """)
    env = {**os.environ, "QUIZAPP_HOME": str(quizapp_home)}
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    count, _, _ = first.stdout.split()
    assert int(count) >= 180 and first.stdout.split()[1:] == ["False", "True"]
    assert second.stdout.split() == [count, "True", "False"]
