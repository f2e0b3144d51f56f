"""The mock interview engine: selection, timing on a fake clock, scoring, and what the store keeps."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from quizapp.bank import load_bank, pack_files
from quizapp.catalog import Exercise
from quizapp.interview import Interview, PlanError, make_plan
from quizapp.interview.plan import (
    EXERCISE_FROM_MINUTES,
    MAX_MINUTES,
    MIN_MINUTES,
    exercise_promise,
    has_exercise,
    topic_weight,
)
from quizapp.interview.report import MISSED, PARTIAL, RIGHT, WRONG
from quizapp.interview.starter import suggested_path, write_starter
from quizapp.study.keypoints import parse_ticks, rating_from_key_points
from quizapp.study.schedule import record_review
from quizapp.study.stats import compute_stats
from quizapp.study.store import Store

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


class FakeClock:
    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


def topic_yaml(slug: str, cards: int, singles: int) -> str:
    lines = [f"topic: {slug}", f"title: Topic {slug}", "questions:"]
    for n in range(cards):
        lines += [f"  - id: {slug}-card-{n}", "    type: card", "    difficulty: 1",
                  f"    prompt: Explain {slug} {n}.", "    explanation: The model answer.",
                  "    key_points: [first point, second point, third point, fourth point]"]
    for n in range(singles):
        lines += [f"  - id: {slug}-single-{n}", "    type: single", "    difficulty: 1",
                  f"    prompt: Pick for {slug} {n}.", "    choices: [right, wrong]", "    answer: 0",
                  "    explanation: The first."]
    return "\n".join(lines) + "\n"


@pytest.fixture
def bank(write_pack):
    for slug in ("alpha", "beta", "gamma"):
        write_pack(topic_yaml(slug, cards=4, singles=4), name=f"{slug}.yaml")
    loaded = load_bank(pack_files([write_pack("topic: delta\ntitle: Delta\nquestions:\n"
                                              "  - id: delta-card\n    type: card\n    difficulty: 1\n"
                                              "    prompt: Say.\n    explanation: It.\n", name="delta.yaml").parent]))
    assert not loaded.errors, loaded.errors
    return loaded


@pytest.fixture
def catalog(tmp_path) -> dict[str, Exercise]:
    return {"beta_ex": Exercise("beta_ex", "Beta exercise", "beta", 2, "Write it.", (), tmp_path),
            "other_ex": Exercise("other_ex", "Elsewhere", "nowhere", 2, "Write it.", (), tmp_path)}


@pytest.fixture
def store():
    with Store.open() as opened:
        yield opened


def plan_for(bank, store, catalog, **kwargs):
    kwargs.setdefault("now", NOW)
    kwargs.setdefault("seed", 7)
    return make_plan(bank, store, catalog, **kwargs)


# -- selection ----------------------------------------------------------------------------


def test_plan_is_sized_to_the_minutes(bank, store, catalog):
    plan = plan_for(bank, store, catalog, minutes=30)
    assert plan.exercise is not None and plan.exercise_minutes == 12
    expected = sum(2.0 if q.type == "card" else 1.0 for q in plan.questions)
    assert expected <= plan.question_minutes and expected > plan.question_minutes - 2
    assert len({q.id for q in plan.questions}) == len(plan.questions)
    short = plan_for(bank, store, catalog, minutes=5)
    assert short.exercise_minutes == 2 and 1 <= len(short.questions) <= 3
    assert plan_for(bank, store, catalog, minutes=4).exercise is None


def test_plan_mixes_topics_and_kinds(bank, store, catalog):
    plan = plan_for(bank, store, catalog, minutes=40)
    topics = Counter(q.topic for q in plan.questions)
    assert len(topics) >= 3
    kinds = Counter(q.type for q in plan.questions)
    assert kinds["card"] and kinds["single"]


def test_plan_leans_towards_weak_and_unseen_topics(bank, store, catalog):
    # alpha: every question seen and known; beta: every question seen and forgotten; gamma: never seen.
    for q in bank.topic_questions("alpha"):
        record_review(store, q, rating=4, correct=True if q.type != "card" else None, now=NOW - timedelta(days=1))
    for q in bank.topic_questions("beta"):
        record_review(store, q, rating=1, correct=False if q.type != "card" else None, now=NOW - timedelta(days=30))
    weights = {t.slug: topic_weight(t) for t in compute_stats(bank.outline(), store, now=NOW).topics}
    assert weights["alpha"] < weights["beta"] and weights["alpha"] < weights["gamma"]
    picked = Counter()
    for seed in range(30):
        plan = plan_for(bank, store, catalog, minutes=12, seed=seed)
        picked.update(q.topic for q in plan.questions)
    assert picked["alpha"] < picked["beta"] and picked["alpha"] < picked["gamma"]
    assert picked["alpha"] > 0  # a strong topic still comes up now and then


def test_topics_are_honoured(bank, store, catalog):
    plan = plan_for(bank, store, catalog, minutes=20, topics=("alpha", "gamma"))
    assert {q.topic for q in plan.questions} <= {"alpha", "gamma"}
    assert plan.exercise is None and plan.exercise_minutes == 0  # no exercise in those topics
    assert plan_for(bank, store, catalog, minutes=20, topics=("beta",)).exercise.id == "beta_ex"


def test_the_interview_can_pick_a_drill_and_names_it_so(bank, store, catalog, tmp_path):
    from quizapp.commands.interview import intro

    drill = Exercise("debug_gamma", "Drill: the loss is NaN", "gamma", 1, "Fix it.", (), tmp_path,
                     source="owner/repo#1: NaN", symptom="NaN at step 2")
    plan = plan_for(bank, store, {**catalog, drill.id: drill}, minutes=20, topics=("gamma",))
    assert plan.exercise is drill
    assert "then the drill 'The loss is NaN' with a 8-minute box" in intro(plan)


def test_what_is_promised_before_the_interview_is_what_the_plan_holds(bank, store, catalog):
    # The setup dialog and the CLI say, for the minutes chosen, whether a coding exercise ends the
    # interview; the plan keeps to it at every length, and a 3-minute interview is not promised one.
    every_topic = set(bank.topics)
    for minutes in range(MIN_MINUTES, MAX_MINUTES + 1):
        plan = plan_for(bank, store, catalog, minutes=minutes)
        promise = exercise_promise(minutes, exercise_available=has_exercise(catalog, every_topic))
        assert ("then a coding exercise" in promise) == (plan.exercise is not None), (minutes, promise)
        if plan.exercise is not None:
            assert promise == (f"{plan.question_minutes:g} minutes of questions, then a coding exercise "
                               f"with a {plan.exercise_minutes:g}-minute box.")
    assert exercise_promise(3) == exercise_promise(4) == (
        "Questions only, no coding exercise (from 5 minutes on, the interview ends with a coding exercise).")
    assert plan_for(bank, store, catalog, minutes=3).exercise is None
    assert plan_for(bank, store, catalog, minutes=EXERCISE_FROM_MINUTES).exercise is not None
    # Topics without an exercise: questions only, and said so.
    assert not has_exercise(catalog, {"alpha", "gamma"})
    assert "none of these topics has one" in exercise_promise(30, exercise_available=False)
    assert plan_for(bank, store, catalog, minutes=30, topics=("alpha", "gamma")).exercise is None


def test_the_starter_is_never_written_over_a_file_unless_asked(tmp_path):
    folder = tmp_path / "ex"
    folder.mkdir()
    (folder / "starter.py").write_text("# quizapp: exercise=beta_ex\n")
    exercise = Exercise("beta_ex", "Beta exercise", "beta", 2, "Write it.", (), folder)
    work = tmp_path / "work"
    assert suggested_path(exercise, work) == work / "interview_beta_ex.py"
    mine = work / "interview_beta_ex.py"
    assert write_starter(exercise, mine) == mine and mine.read_text() == "# quizapp: exercise=beta_ex\n"
    mine.write_text("my solution")
    assert suggested_path(exercise, work) == work / "interview_beta_ex-2.py"
    with pytest.raises(FileExistsError):
        write_starter(exercise, mine)
    assert mine.read_text() == "my solution"
    write_starter(exercise, mine, replace=True)
    assert mine.read_text() == "# quizapp: exercise=beta_ex\n"


def test_bad_requests_are_refused_with_a_reason(bank, store, catalog):
    with pytest.raises(PlanError, match="no topic 'nope'"):
        plan_for(bank, store, catalog, topics=("nope",))
    with pytest.raises(PlanError, match="3 to 180 minutes"):
        plan_for(bank, store, catalog, minutes=1)


# -- timing, scoring, storage -------------------------------------------------------------


def run_interview(bank, store, catalog, clock, **kwargs):
    kwargs.setdefault("topics", ("alpha", "beta", "gamma"))  # every card there has key points
    plan = plan_for(bank, store, catalog, **kwargs)
    interview = Interview(plan, bank, store, clock=clock)
    interview.start()
    return interview


def test_answers_are_timed_scored_and_saved_as_reviews(bank, store, catalog):
    clock = FakeClock()
    interview = run_interview(bank, store, catalog, clock, minutes=30)
    outcomes = []
    while (q := interview.current) is not None:
        interview.show()
        clock.advance(seconds=40)
        assert interview.submit()
        clock.advance(seconds=5)  # ticking key points is not answering time
        if q.type == "card":
            outcomes.append(interview.answer_card("my answer", covered=[0, 1]))
        else:
            outcomes.append(interview.answer(0 if len(outcomes) % 4 else 1))
    assert {r.seconds for r in outcomes} == {40.0}
    cards = [r for r in outcomes if r.type == "card"]
    assert all(r.outcome == PARTIAL and r.score == 0.5 and r.rating == 2 for r in cards)
    singles = [r for r in outcomes if r.type == "single"]
    assert {r.outcome for r in singles} <= {RIGHT, WRONG}
    assert store.answer_count() == len(outcomes)
    assert set(store.cards()) == {r.question_id for r in outcomes}
    assert interview.phase == "exercise"


def test_time_up_counts_the_rest_as_missed_and_keeps_them_out_of_fsrs(bank, store, catalog):
    clock = FakeClock()
    interview = run_interview(bank, store, catalog, clock, minutes=20)
    first = interview.current
    interview.show()
    clock.advance(seconds=30)
    interview.submit()
    if first.type == "card":
        interview.answer_card("all of it", covered=[0, 1, 2, 3])
    else:
        interview.answer(first.answer)
    assert interview.remaining_s() == pytest.approx(interview.plan.question_minutes * 60 - 30)
    clock.advance(minutes=interview.plan.question_minutes)
    assert interview.time_up()
    interview.show()
    assert not interview.submit()  # too late: the UI ends the questions instead
    interview.end_questions()
    missed = [r for r in interview.results if r.outcome == MISSED]
    assert len(missed) == len(interview.plan.questions) - 1 and all(r.seconds is None for r in missed)
    assert store.answer_count() == 1
    assert interview.phase == "exercise"
    assert interview.remaining_s() == pytest.approx(interview.plan.exercise_minutes * 60 - 30)


def test_report_card_scores_topics_the_exercise_and_what_to_study(bank, store, catalog):
    clock = FakeClock()
    interview = run_interview(bank, store, catalog, clock, minutes=30, seed=3)
    while (q := interview.current) is not None:
        interview.show()
        clock.advance(seconds=20)
        interview.submit()
        if q.type == "card":
            interview.answer_card("", covered=[0, 1, 2, 3] if q.topic == "alpha" else [])
        else:
            interview.answer(0 if q.topic != "gamma" else 1)
    clock.advance(minutes=3)
    interview.exercise_graded({"status": "fail", "message": None, "checks": [
        {"id": "a", "title": "Runs", "status": "pass", "message": ""},
        {"id": "b", "title": "Scales", "status": "fail", "message": "expected x65536, saw x1"},
        {"id": "c", "title": "On GPU", "status": "skip", "message": "no CUDA"}]})
    card = interview.finish()
    assert card.exercise.passed == 1 and card.exercise.counted == 2 and card.exercise.score == 0.5
    assert card.exercise.seconds == 180
    by_topic = {t.slug: t for t in card.topics}
    assert set(by_topic) >= {"beta"}  # the exercise's topic is on the card
    if "alpha" in by_topic:
        assert by_topic["alpha"].score == 1.0 and "alpha" not in card.study_next
    # gamma: every answer wrong; beta: cards blank, checks right, exercise half; alpha: full marks.
    assert card.study_next == ["gamma", "beta"]
    share = interview.plan.exercise_minutes / interview.plan.minutes
    assert card.score == pytest.approx((1 - share) * card.question_score + share * 0.5)
    stored = store.interviews()
    assert len(stored) == 1
    record = stored[0]
    assert record.score == pytest.approx(card.score) and record.minutes == 30
    assert record.report["topics"]["beta"]["score"] == pytest.approx(by_topic["beta"].score, abs=1e-4)
    assert record.report["exercise"]["checks"][1]["message"] == "expected x65536, saw x1"
    assert [q["id"] for q in record.report["questions"]] == [q.id for q in interview.plan.questions]
    assert interview.finish() is card and len(store.interviews()) == 1  # kept once


def test_ending_early_keeps_what_was_answered(bank, store, catalog):
    clock = FakeClock()
    interview = run_interview(bank, store, catalog, clock, minutes=10)
    card = interview.finish(ended_early=True)
    assert card.ended_early and all(r.outcome == MISSED for r in card.questions)
    assert card.exercise.status == "not graded" and card.score == 0
    assert store.interviews()[0].report["ended_early"] is True


def test_a_card_without_key_points_is_rated_by_the_learner(bank, store):
    plan = plan_for(bank, store, {}, minutes=3, topics=("delta",))
    interview = Interview(plan, bank, store, clock=FakeClock())
    interview.start()
    with pytest.raises(ValueError):
        interview.answer_card("text")
    result = interview.answer_card("text", rating=2)
    assert result.outcome == PARTIAL and result.score == 0.5 and result.rating == 2


# -- key points ---------------------------------------------------------------------------


@pytest.mark.parametrize(("covered", "total", "rating"), [
    (0, 3, 1), (1, 3, 1), (2, 3, 2), (3, 3, 3), (2, 4, 2), (3, 4, 3), (4, 4, 3), (1, 5, 1), (2, 5, 2), (4, 5, 3),
])
def test_ticked_key_points_suggest_a_rating(covered, total, rating):
    assert rating_from_key_points(covered, total) == rating


def test_ticks_are_read_from_numbers():
    assert parse_ticks("1 3", 4) == [0, 2]
    assert parse_ticks("3,1,3", 4) == [0, 2]
    assert parse_ticks("", 4) == []
    assert parse_ticks("5", 4) is None and parse_ticks("a", 4) is None and parse_ticks("0", 4) is None


def test_the_engine_imports_neither_torch_nor_textual():
    import subprocess
    import sys

    code = ("import sys, quizapp.interview, quizapp.study.keypoints; "
            "print([m for m in ('torch', 'textual') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "[]"


def test_study_next_keeps_titles_with_commas_apart():
    from quizapp.interview.render import study_next_text
    from quizapp.interview.report import ReportCard

    card = ReportCard(started_at=NOW, finished_at=NOW, minutes=30, score=0.0, question_score=0.0, questions=[],
                      topics=[], exercise=None, study_next=["stability", "formats"],
                      titles={"stability": "Training stability: z-loss, QK-norm", "formats": "Formats (fp16, bf16)"})
    assert study_next_text(card).plain == ("Study next: Training stability: z-loss, QK-norm · "
                                           "Formats (fp16, bf16)")
