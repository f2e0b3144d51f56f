"""`quizapp optimize`: refuse below the minimum, keep fitted parameters only when they predict better."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsrs import Card, Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from quizapp.bank import Question
from quizapp.cli import cli
from quizapp.study import fitting
from quizapp.study.fitting import MIN_REVIEWS, FitError, log_loss, optimize, review_log, usable_reviews
from quizapp.study.schedule import preview, record_review, scheduler
from quizapp.study.store import Store

T0 = datetime(2025, 1, 1, 9, tzinfo=timezone.utc)
# A learner who forgets much faster than FSRS's defaults expect.
TRUE_PARAMETERS = tuple(0.1 if i == 0 else 0.4 if i == 2 else 0.5 if i == 20 else p
                        for i, p in enumerate(DEFAULT_PARAMETERS))


def question(qid: str) -> Question:
    return Question(id=qid, type="card", difficulty=1, prompt="p", explanation="e", topic="demo",
                    source=Path("x.yaml"), line=1)


def synthetic_reviews(cards: int, days: int, seed: int = 0) -> list[tuple[str, datetime, int]]:
    """Reviews on the due dates, recalled with the probability the learner's true parameters give."""
    rng = random.Random(seed)
    truth = Scheduler(parameters=TRUE_PARAMETERS, enable_fuzzing=False)
    out = []
    for c in range(cards):
        card = Card(card_id=c + 1, due=T0 + timedelta(days=rng.randrange(20)))
        at = card.due
        while at < T0 + timedelta(days=days):
            recalled = card.last_review is None or rng.random() < truth.get_card_retrievability(card, at)
            rating = Rating.Good if recalled else Rating.Again
            out.append((f"q{c}", at, int(rating)))
            card, _ = truth.review_card(card, rating, review_datetime=at)
            # reviews at scattered gaps, not on the due dates: recall then varies enough to tell parameters apart
            at += timedelta(days=rng.randint(1, 20), hours=rng.randrange(12))
    return sorted(out, key=lambda review: review[1])


def fill(store: Store, reviews) -> None:
    for qid, at, rating in reviews:
        record_review(store, question(qid), rating=rating, correct=None, now=at)


@pytest.fixture(scope="module")
def history():
    reviews = synthetic_reviews(cards=45, days=150)
    assert usable_reviews(reviews) >= MIN_REVIEWS
    return reviews


def test_refuses_politely_below_the_minimum():
    with Store.open() as store:
        fill(store, synthetic_reviews(cards=5, days=60))
        called = []
        with pytest.raises(FitError, match=f"needs {MIN_REVIEWS}") as refused:
            optimize(store, fit=lambda reviews: called.append(1))
        assert not called and store.fsrs_parameters() is None
    assert "not enough history yet" in str(refused.value)


def test_the_true_parameters_beat_the_defaults(history):
    assert log_loss(history, TRUE_PARAMETERS) < log_loss(history, None)
    assert log_loss(history, tuple(DEFAULT_PARAMETERS)) == log_loss(history, None)


def test_better_parameters_are_kept_and_schedule_from_then_on(history):
    with Store.open() as store:
        fill(store, history)
        before = json.loads(store.card_json("q0"))
        result = optimize(store, fit=lambda reviews: TRUE_PARAMETERS)
        assert result.kept and result.fitted_loss < result.default_loss == result.current_loss
        assert store.fsrs_parameters() == TRUE_PARAMETERS
        after = json.loads(store.card_json("q0"))
        assert after["stability"] != before["stability"]  # cards were replayed with the fitted parameters
        # the next review, and what the rating buttons show, use them too
        at = history[-1][1] + timedelta(days=3)
        card = Card.from_dict(after)
        expected, _ = scheduler(TRUE_PARAMETERS).review_card(card, Rating.Good, review_datetime=at)
        assert preview(store.card_json("q0"), at, store.fsrs_parameters())[3] == expected.due - at
        assert record_review(store, question("q0"), rating=3, correct=None, now=at) == expected.due
    with Store.open() as store:  # a new process starts on them as well
        assert store.fsrs_parameters() == TRUE_PARAMETERS


def test_worse_parameters_are_not_kept(history):
    worse = (50.0, 60.0, 70.0, 80.0) + tuple(DEFAULT_PARAMETERS[4:])  # a learner who never forgets
    with Store.open() as store:
        fill(store, history)
        cards = store.cards()
        result = optimize(store, fit=lambda reviews: worse)
        assert not result.kept and result.fitted_loss > result.current_loss
        assert store.fsrs_parameters() is None and store.cards() == cards


def test_a_refit_is_compared_with_the_parameters_in_use(history):
    with Store.open() as store:
        fill(store, history)
        optimize(store, fit=lambda reviews: TRUE_PARAMETERS)
        again = optimize(store, fit=lambda reviews: DEFAULT_PARAMETERS)
        assert not again.kept and again.current_loss < again.default_loss
        assert store.fsrs_parameters() == TRUE_PARAMETERS


def test_the_child_reports_a_bad_request():
    done = subprocess.run([sys.executable, "-m", "quizapp.study.optimize_child"], input="{not json",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "bad review log" in done.stderr


def test_a_failing_child_is_a_fit_error(monkeypatch, history):
    monkeypatch.setattr(fitting.sys, "executable", sys.executable + "-missing")
    with pytest.raises(FitError, match="cannot start the optimizer"):
        fitting.fit_parameters(history[:5])


def test_cli_refuses_below_the_minimum_and_resets():
    with Store.open() as store:
        fill(store, synthetic_reviews(cards=2, days=30))
        store.set_fsrs_parameters(list(TRUE_PARAMETERS))
    refused = CliRunner().invoke(cli, ["optimize"], catch_exceptions=False)
    assert refused.exit_code == 1 and "not enough history yet" in refused.output
    reset = CliRunner().invoke(cli, ["optimize", "--reset"], catch_exceptions=False)
    assert reset.exit_code == 0 and "Back to FSRS's default parameters" in reset.output
    with Store.open() as store:
        assert store.fsrs_parameters() is None


@pytest.mark.slow
def test_optimize_fits_a_synthetic_review_log_in_a_child_process(history):
    """The real optimizer (torch, in its own process) on a learner who forgets faster than the defaults."""
    with Store.open() as store:
        fill(store, history)
        assert len(review_log(store)) == len(history)
        result = optimize(store)
    assert result.kept and result.fitted_loss < result.default_loss
    assert result.fitted != tuple(DEFAULT_PARAMETERS)
    assert "fsrs.optimizer" not in sys.modules  # the fit ran in the child; this process never loaded it
