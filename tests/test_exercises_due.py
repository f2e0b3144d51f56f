"""Exercises that come back, and checks that point at questions, through the public surface:
`quizapp grade --json`'s `review`, `quizapp due --json`, the review queue, `quizapp start`,
`quizapp review`, the interview's choice, and a progress file's round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

from quizapp.bank.cache import load_bank_cached
from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.interview.plan import make_plan
from quizapp.study.due import due_plan
from quizapp.study.queue import study_queue
from quizapp.study.store import Store
from quizapp.study.transfer import export_progress, import_progress

ROOT = Path(__file__).resolve().parents[1]
BUGGY = ROOT / "tests" / "grader" / "buggy"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def quizapp(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quizapp", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def topics() -> dict[str, str]:
    return {q.id: q.topic for q in load_bank_cached().questions.values()}


def record(store: Store, exercise: str, status: str, at: datetime, file_hash: str, review=()) -> None:
    store.record_grade(exercise, status=status, checks_passed=1, checks_total=1, at=at, file_hash=file_hash,
                       report={"schema": 1, "review": list(review)})


def test_a_failed_check_sends_its_questions_to_review_first():
    catalog = load_catalog()
    graded = quizapp("grade", str(BUGGY / "fake_quant" / "floor_half_up.py"), "--json")
    report = json.loads(graded.stdout)
    failed = [c["id"] for c in report["checks"] if c["status"] == "fail"]
    assert failed == ["round-half-even"]
    assert report["review"] == list(catalog["fake_quant"].questions["round-half-even"])
    plan = json.loads(quizapp("due", "--json").stdout)
    due_now = [q["id"] for q in plan["questions"] if q["due"] <= plan["now"]]
    assert due_now == sorted(report["review"])
    assert plan["exercises"] == []  # failing is no pass: nothing scheduled yet
    with Store.open() as store:
        queue = study_queue(load_bank_cached(), store, limit=5)
    assert {q.id for q in queue[:len(report["review"])]} == set(report["review"])


def test_a_passing_grade_has_an_empty_review_and_schedules_the_exercise_ahead():
    report = json.loads(quizapp("grade", str(ROOT / "exercises" / "warmup_cosine" / "reference.py"), "--json").stdout)
    assert report["status"] == "pass" and report["review"] == []
    plan = json.loads(quizapp("due", "--json").stdout)
    (item,) = plan["exercises"]
    assert item["id"] == "warmup_cosine" and item["due"] > plan["now"]
    table = quizapp("due")
    assert "warmup_cosine" in table.stdout and "in 2d" in table.stdout


def test_answering_an_asked_question_takes_it_off_the_list():
    with Store.open() as store:
        record(store, "fake_quant", "fail", T0, "h1", review=["quant-ste"])
        assert [q.id for q in due_plan(store, topics(), load_catalog(), T0).questions_due()] == ["quant-ste"]
        from quizapp.study.schedule import record_review

        record_review(store, load_bank_cached().questions["quant-ste"], rating=3, correct=True,
                      now=T0 + timedelta(minutes=5))
        plan = due_plan(store, topics(), load_catalog(), T0 + timedelta(minutes=6))
        assert plan.questions_due() == [] and [q.id for q in plan.questions] == ["quant-ste"]  # its card, ahead


def test_a_question_a_pack_removed_is_skipped_and_a_retired_exercise_keeps_its_history():
    with Store.open() as store:
        record(store, "fake_quant", "fail", T0, "h1", review=["no-such-question", "quant-ste"])
        record(store, "an_old_exercise", "pass", T0, "h2")
        plan = due_plan(store, topics(), load_catalog(), T0)
    assert [q.id for q in plan.questions] == ["quant-ste"]
    assert plan.retired == ["an_old_exercise"] and all(e.id != "an_old_exercise" for e in plan.exercises)


def test_start_offers_a_fresh_file_for_a_passed_exercise_and_keeps_the_old(tmp_path):
    catalog = load_catalog()
    (tmp_path / "lora.py").write_text("my first solution\n")
    assert quizapp("start", "lora", cwd=tmp_path).returncode == 1  # never passed: refused as before
    with Store.open() as store:
        record(store, "lora", "pass", datetime.now(timezone.utc) - timedelta(days=9), "h1")
    out = quizapp("start", "lora", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "lora is due for review: a fresh starter goes to lora_2.py (lora.py is kept)" in out.stdout
    assert (tmp_path / "lora.py").read_text() == "my first solution\n"
    assert (tmp_path / "lora_2.py").read_text() == catalog["lora"].starter.read_text()
    assert "lora_3.py" in quizapp("start", "lora", cwd=tmp_path).stdout


def test_review_says_which_file_to_write_for_a_due_exercise(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Store.open() as store:
        record(store, "warmup_cosine", "pass", datetime.now(timezone.utc) - timedelta(days=9), "h1")
    result = CliRunner().invoke(cli, ["review", "--topic", "lr-schedules"], input="q\n", catch_exceptions=False)
    text = " ".join(result.output.split())
    assert "1 exercise due for review" in text
    assert "quizapp start warmup_cosine (a fresh starter in warmup_cosine.py)" in text
    assert "quizapp grade warmup_cosine.py" in text


def test_the_interview_picks_a_due_exercise_of_its_topics():
    bank, catalog = load_bank_cached(), load_catalog()
    with Store.open() as store:
        for exercise in ("amp_training", "loss_scaler"):
            record(store, exercise, "pass", T0, f"h-{exercise}")
        now = T0 + timedelta(days=30)  # both due; loss_scaler passed once more since
        record(store, "loss_scaler", "pass", now - timedelta(hours=1), "h-again")
        plan = make_plan(bank, store, catalog, minutes=30, topics=("mixed-precision",), now=now, seed=1)
    assert plan.exercise.id == "amp_training"


def test_a_progress_file_carries_the_schedule_and_an_older_one_still_imports(tmp_path):
    catalog = load_catalog()
    with Store.open(tmp_path / "a.sqlite3") as a:
        record(a, "fake_quant", "fail", T0, "h1", review=["lora-merge"])
        a.record_exercise_event("lora", "hint", at=T0 + timedelta(minutes=3))
        record(a, "lora", "pass", T0 + timedelta(minutes=9), "h2")
        document = export_progress(a)
        before = due_plan(a, topics(), catalog, T0 + timedelta(days=1))
    assert [e["kind"] for e in document["exercise_events"]] == ["hint"]
    assert document["exercises"][0]["exercise_id"] == "lora" and document["exercises"][0]["reviews"][0]["rating"] == 2
    with Store.open(tmp_path / "b.sqlite3") as b:
        summary = import_progress(b, document)
        after = due_plan(b, topics(), catalog, T0 + timedelta(days=1))
        assert summary.exercise_events == 1 and import_progress(b, document).changed is False
    assert after.exercises == before.exercises and after.states["lora"].reviews == before.states["lora"].reviews
    assert [q.id for q in after.questions] == [q.id for q in before.questions] == ["lora-merge"]
    older = {k: v for k, v in document.items() if k not in ("exercise_events", "exercises")}
    with Store.open(tmp_path / "c.sqlite3") as c:
        assert import_progress(c, older).grades == 2
        assert due_plan(c, topics(), catalog, T0 + timedelta(days=1)).states["lora"].reviews[0].rating == 3


def test_a_scripted_first_week(capsys):
    """Day by day, what `quizapp due` holds for a learner who passes lora on day 0 after a hint, fails
    an amp check, answers every question that is due each day (Good), and writes lora again from a
    fresh file whenever it is due."""
    from quizapp.study.schedule import record_review

    catalog, qtopics, bank = load_catalog(), topics(), load_bank_cached()
    asked = list(catalog["amp_training"].questions["clip-after-unscale"])
    week = []
    with Store.open() as store:
        store.record_exercise_event("lora", "hint", at=T0 + timedelta(minutes=20))
        record(store, "lora", "pass", T0 + timedelta(minutes=40), "lora-day0")
        record(store, "amp_training", "fail", T0 + timedelta(hours=1), "amp-v1", review=asked)
        for day in range(8):
            now = T0 + timedelta(days=day, hours=12)
            plan = due_plan(store, qtopics, catalog, now)
            due_questions = plan.questions_due()
            week.append((day, len(due_questions), sum(1 for q in due_questions if q.asked_by),
                         [e.id for e in plan.exercises_due()], [r.rating for r in plan.states["lora"].reviews]))
            for q in due_questions:
                record_review(store, bank.questions[q.id], rating=3, correct=True, now=now)
            if "lora" in week[-1][3]:  # due: written again in a new file, first try, no help
                record(store, "lora", "pass", now + timedelta(minutes=30), f"lora-day{day}")
    with capsys.disabled():
        print("\nday  questions due (asked by a check)  exercises due  lora's ratings so far")
        for day, questions, by_check, exercises, ratings in week:
            print(f"{day:>3}  {questions:>13} ({by_check})  {', '.join(exercises) or '-':>25}  {ratings}")
    assert week[0][1:3] == (len(asked), len(asked)) and week[0][4] == [2]  # a hint before the first pass: Hard
    assert week[1][2] == 0  # answered on day 0: no longer asked for by the check
    due_days = [day for day, *_, exercises, _ in week if "lora" in exercises]
    assert due_days[0] == 1 and len(due_days) >= 2  # Hard: back the next day; Good: days later
    assert week[-1][4][:2] == [2, 3]  # written again without help: Good
    gaps = [b - a for a, b in zip(due_days, due_days[1:])]
    assert gaps == sorted(gaps) and gaps[-1] > 1  # each pass moves it further out
