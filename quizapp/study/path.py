"""A path through the exercises, as rustlings has: after a pass, the next exercise to try is one not
yet passed, in the learner's weakest topic first (by mastery), then the easiest, then by id. The
debugging drills come after the exercises: a drill asks to find a bug in a technique the exercises
taught to build."""

from __future__ import annotations

from collections.abc import Mapping

from quizapp.study.stats import Stats


def next_exercise(catalog: Mapping, stats: Stats):
    """The catalog Exercise to try next, or None when every exercise is passed. `stats` gives what is
    passed and each topic's mastery (a topic without questions counts as the weakest)."""
    passed = {e.exercise_id for e in stats.exercises if e.passed}
    mastery = {t.slug: t.mastery for t in stats.topics}
    left = [ex for ex in catalog.values() if ex.id not in passed]
    return min(left, key=lambda ex: (ex.is_drill, mastery.get(ex.topic, 0.0), ex.difficulty, ex.id), default=None)


def next_exercise_in(store, outline, catalog: Mapping):
    """`next_exercise` from the store and the bank's outline as they are now."""
    from quizapp.study.stats import compute_stats

    return next_exercise(catalog, compute_stats(outline, store, exercise_ids=tuple(catalog)))
