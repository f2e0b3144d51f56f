"""Progress JSON: round trip, double import, two machines converging, bad files refused untouched."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.bank import Question
from quizapp.cli import cli
from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.study.transfer import (
    FORMAT_VERSION,
    TransferError,
    export_progress,
    import_progress,
    read_export,
    write_export,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def question(qid: str, topic: str = "demo") -> Question:
    return Question(id=qid, type="card", difficulty=1, prompt="p", explanation="e", topic=topic,
                    source=Path("x.yaml"), line=1)


def fill(store: Store, *, offset_h: int = 0, ratings=(3, 1, 3), qids=("q1", "q2")) -> None:
    """A few days of reviews on a few questions, a grade and an interview."""
    for day, rating in enumerate(ratings):
        for qid in qids:
            record_review(store, question(qid), rating=rating, correct=rating > 1, response={"text": "x"},
                          duration_ms=1200, now=T0 + timedelta(days=day, hours=offset_h))
    store.record_grade("amp_training", status="fail", checks_passed=3, checks_total=8, device="cpu",
                       duration_s=1.5, file_path="amp.py", file_hash="ab" * 32, report={"status": "fail"},
                       at=T0 + timedelta(hours=offset_h))
    store.record_interview(started_at=T0 + timedelta(hours=offset_h), finished_at=T0 + timedelta(hours=offset_h, minutes=5),
                           minutes=5, score=0.5, report={"topics": {"demo": 0.5}})


def snapshot(store: Store) -> dict:
    """Everything an import may change, independent of row ids and card ids."""
    doc = export_progress(store, now=T0)
    for card in doc["cards"]:
        card["card"].pop("card_id")
    doc.pop("exported_at")
    return doc


def open_at(path: Path) -> Store:
    return Store.open(path)


def test_round_trip_into_an_empty_store(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        write_export(a, tmp_path / "p.json")
        before = snapshot(a)
    with open_at(tmp_path / "b.sqlite3") as b:
        summary = import_progress(b, read_export(tmp_path / "p.json"))
        assert (summary.answers, summary.grades, summary.interviews, summary.cards) == (6, 1, 1, 2)
        after = snapshot(b)
        assert b.interviews()[0].report == {"topics": {"demo": 0.5}}
        assert b.grades("amp_training")[0].checks_passed == 3
    assert after == before  # answers, grades, interviews, and the replayed cards equal the live ones


def test_importing_twice_changes_nothing(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        write_export(a, tmp_path / "p.json")
    with open_at(tmp_path / "b.sqlite3") as b:
        import_progress(b, read_export(tmp_path / "p.json"))
        once = snapshot(b)
        summary = import_progress(b, read_export(tmp_path / "p.json"))
        assert not summary.changed and summary.cards == 0
        assert snapshot(b) == once
    with open_at(tmp_path / "a.sqlite3") as a:  # its own file back: nothing doubles either
        assert not import_progress(a, read_export(tmp_path / "p.json")).changed
        assert a.answer_count() == 6


def test_two_machines_importing_each_others_files_converge(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a, qids=("q1", "q2"))
        write_export(a, tmp_path / "a.json")
    with open_at(tmp_path / "b.sqlite3") as b:
        # B studied the shared q2 in between A's reviews, and a question of its own
        fill(b, offset_h=5, ratings=(4, 3), qids=("q2", "q3"))
        write_export(b, tmp_path / "b.json")
        import_progress(b, read_export(tmp_path / "a.json"))
        on_b = snapshot(b)
    with open_at(tmp_path / "a.sqlite3") as a:
        import_progress(a, read_export(tmp_path / "b.json"))
        on_a = snapshot(a)
    assert on_a == on_b
    assert len(on_a["answers"]) == 6 + 4 and len(on_a["interviews"]) == 2 and len(on_a["grades"]) == 2
    q2 = next(c for c in on_a["cards"] if c["question_id"] == "q2")
    assert q2["reviewed_at"] == (T0 + timedelta(days=2)).isoformat()  # the latest of both machines' reviews


def test_replayed_card_follows_the_merged_history(tmp_path):
    """q2 answered Again on B after A's Good reviews: the merged card is the one live reviews would give."""
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a, ratings=(3, 3), qids=("q2",))
        write_export(a, tmp_path / "a.json")
    with open_at(tmp_path / "c.sqlite3") as c:  # the same three reviews, live, in time order
        for day, rating in ((0, 3), (1, 3), (1.5, 1)):
            record_review(c, question("q2"), rating=rating, correct=None, now=T0 + timedelta(days=day))
        live = json.loads(c.card_json("q2"))
    with open_at(tmp_path / "b.sqlite3") as b:
        record_review(b, question("q2"), rating=1, correct=None, now=T0 + timedelta(days=1.5))
        import_progress(b, read_export(tmp_path / "a.json"))
        merged = json.loads(b.card_json("q2"))
    live.pop("card_id"), merged.pop("card_id")
    assert merged == live and merged["state"] == 3  # relearning after the late Again


def damaged_files(tmp_path: Path, good: dict) -> dict[str, tuple[object, str]]:
    newer = dict(good, version=FORMAT_VERSION + 1)
    bad_rating = json.loads(json.dumps(good))
    bad_rating["answers"][2]["rating"] = 7
    no_uid = json.loads(json.dumps(good))
    del no_uid["grades"][0]["uid"]
    naive = json.loads(json.dumps(good))
    naive["interviews"][0]["started_at"] = "2026-03-01T09:00:00"
    twice = json.loads(json.dumps(good))
    twice["answers"].append(dict(twice["answers"][0]))
    return {
        "newer": (newer, "newer quizapp (format version 2"),
        "rating": (bad_rating, "answers[2].rating must be a whole number from 1 to 4"),
        "uid": (no_uid, "grades[0] has no \"uid\""),
        "naive": (naive, "interviews[0].started_at must be an ISO 8601 time with its UTC offset"),
        "twice": (twice, "answers[6] repeats the id"),
        "other": ({"hello": 1}, "not a quizapp progress export"),
        "truncated": (json.dumps(good)[:-40], "damaged: not valid JSON"),
        "binary": (b"\x89PNG\r\n\x1a\n\xff\xfe", "not UTF-8"),
    }


@pytest.mark.parametrize("case", ["newer", "rating", "uid", "naive", "twice", "other", "truncated", "binary"])
def test_bad_file_is_refused_and_the_store_untouched(tmp_path, case):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        good = export_progress(a)
    document, message = damaged_files(tmp_path, good)[case]
    path = tmp_path / "bad.json"
    if isinstance(document, bytes):
        path.write_bytes(document)
    else:
        path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with open_at(tmp_path / "b.sqlite3") as b:
        record_review(b, question("q9"), rating=3, correct=True, now=T0)
        before = snapshot(b)
        with pytest.raises(TransferError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
            import_progress(b, read_export(path))
        assert snapshot(b) == before


def test_a_failure_midway_rolls_the_whole_import_back(tmp_path, monkeypatch):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        document = export_progress(a)
    import quizapp.study.schedule as schedule

    def broken(*args, **kwargs):
        raise RuntimeError("disk gone")
    monkeypatch.setattr(schedule, "replay_card", broken)
    with open_at(tmp_path / "b.sqlite3") as b:
        with pytest.raises(RuntimeError):
            import_progress(b, document)
        assert b.answer_count() == 0 and b.interviews() == [] and b.grades() == []


def test_fitted_parameters_travel_to_a_store_without_its_own(tmp_path):
    from fsrs.scheduler import DEFAULT_PARAMETERS

    fitted = [round(p * 1.01, 4) for p in DEFAULT_PARAMETERS]
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        a.set_fsrs_parameters(fitted)
        document = export_progress(a)
    with open_at(tmp_path / "b.sqlite3") as b:
        assert import_progress(b, document).parameters
        assert b.fsrs_parameters() == tuple(fitted)
    with open_at(tmp_path / "c.sqlite3") as c:
        c.set_fsrs_parameters(list(DEFAULT_PARAMETERS))
        assert not import_progress(c, document).parameters
        assert c.fsrs_parameters() == tuple(DEFAULT_PARAMETERS)


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_export_then_import(tmp_path, quizapp_home):
    with Store.open() as store:
        fill(store)
    out = tmp_path / "progress.json"
    result = run("export", "json", str(out))
    assert result.exit_code == 0 and "6 answers, 2 cards, 1 grade, 1 interview" in result.output
    assert json.loads(out.read_text())["version"] == FORMAT_VERSION
    again = run("import", str(out))
    assert again.exit_code == 0 and "Nothing new" in again.output


def test_cli_import_of_a_damaged_file_says_why(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "quizapp-progress", "version": 1, "answers": [', encoding="utf-8")
    result = run("import", str(bad))
    assert result.exit_code == 1
    assert "damaged: not valid JSON" in result.output and "Nothing was imported" in result.output
    missing = run("import", str(tmp_path / "nope.json"))
    assert missing.exit_code == 1 and "no such file" in missing.output


# -- study settings -------------------------------------------------------------------------------

def test_the_daily_limit_travels_to_a_store_that_never_set_one(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        a.set_setting("new_per_day", 7)
        write_export(a, tmp_path / "p.json")
    document = read_export(tmp_path / "p.json")
    assert document["settings"] == {"new_per_day": 7}
    with open_at(tmp_path / "b.sqlite3") as b:
        summary = import_progress(b, document)
        assert summary.settings == (("new_per_day", 7),) and summary.changed
        assert b.new_per_day() == 7
        again = import_progress(b, document)  # twice: nothing changes, nothing to report
        assert not again.changed and again.settings == () and again.settings_kept == ()
    with open_at(tmp_path / "c.sqlite3") as c:  # a machine where the learner set their own: kept, and said
        c.set_setting("new_per_day", 12)
        summary = import_progress(c, document)
        assert summary.settings == () and summary.settings_kept == (("new_per_day", 12, 7),)
        assert c.new_per_day() == 12


def test_an_export_without_settings_still_imports_and_one_own_export_back_changes_nothing(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        document = export_progress(a)
    assert document["settings"] == {"new_per_day": 20}  # the default, written for readers
    old = dict(document)
    del old["settings"]  # as a quizapp before settings travelled wrote it
    with open_at(tmp_path / "b.sqlite3") as b:
        summary = import_progress(b, old)
        assert summary.answers == 6 and summary.settings == () and b.new_per_day() == 20
        assert b.setting("new_per_day") is None  # the default stays a default, not a choice
    with open_at(tmp_path / "a.sqlite3") as a:
        assert not import_progress(a, document).changed
        assert a.setting("new_per_day") is None


@pytest.mark.parametrize("settings, message", [
    ([], "\"settings\" must be an object"),
    ({"new_per_day": -1}, "\"new_per_day\" that must be a whole number from 0 to 10000, got -1"),
    ({"new_per_day": "ten"}, "\"new_per_day\" that must be a whole number"),
    ({"new_per_day": True}, "\"new_per_day\" that must be a whole number"),
])
def test_a_bad_setting_is_refused_and_nothing_imported(tmp_path, settings, message):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        document = export_progress(a)
    document["settings"] = settings
    with open_at(tmp_path / "b.sqlite3") as b:
        with pytest.raises(TransferError, match=message.replace("(", r"\(")):
            import_progress(b, document)
        assert b.answer_count() == 0 and b.setting("new_per_day") is None


def test_a_setting_this_quizapp_does_not_know_is_skipped(tmp_path):
    with open_at(tmp_path / "a.sqlite3") as a:
        fill(a)
        document = export_progress(a)
    document["settings"] = {"new_per_day": 5, "theme": "dark"}
    with open_at(tmp_path / "b.sqlite3") as b:
        assert import_progress(b, document).settings == (("new_per_day", 5),)
        assert b.setting("theme") is None


def test_cli_export_and_import_say_what_became_of_the_settings(tmp_path, quizapp_home):
    with Store.open() as store:
        fill(store)
    assert run("config", "new-per-day", "8").exit_code == 0
    out = tmp_path / "progress.json"
    wrote = run("export", "json", str(out))
    assert "your settings (new-per-day = 8)" in wrote.output
    with Store.open() as store, store.transaction() as conn:  # a fresh machine's store: no setting of its own
        conn.execute("DELETE FROM settings WHERE key = 'new_per_day'")
        conn.execute("DELETE FROM answers")
    taken = run("import", str(out))
    assert taken.exit_code == 0 and "Your setting came along: new-per-day = 8." in taken.output
    assert "new-per-day = 8" in run("config", "new-per-day").output
    assert run("config", "new-per-day", "3").exit_code == 0
    kept = run("import", str(out))
    assert "Nothing new" in kept.output
    assert "Kept this machine's new-per-day = 3 (the file has 8;" in kept.output
