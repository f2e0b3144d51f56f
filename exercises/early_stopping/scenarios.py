"""The metrics the grader hands step(), and why each sequence is there: plateaus, ties at min_delta,
NaN, mode max. Loaded by path from checks.py, never imported by name."""

from __future__ import annotations

import math

from quizapp.checking.harness import sibling_module

Scenario = sibling_module(__file__, "play").Scenario
NAN, INF = math.nan, math.inf
LONG = 20  # a patience no scenario reaches: only the improvements are judged

# Metrics are chosen so that every comparison is exact in floating point: best - min_delta is
# computed without rounding (binary fractions), so a tie at min_delta is a true tie.
PLOT = Scenario((1.00, 0.82, 0.71, 0.66, 0.68, 0.64, 0.63, 0.65, 0.66, 0.64, 0.67, 0.70, 0.74), 3)
PATIENCE = [
    PLOT,  # a bad call, then two improvements that restart the count: stops at 9, best 6
    Scenario((2.0, 1.5, 1.6, 1.7, 1.8, 1.9), 1),
    Scenario((1.0, 0.9, 0.95, 0.92, 0.85, 0.86, 0.87, 0.9, 0.88, 0.95, 0.99, 1.1, 1.2), 5),
    Scenario((3.0, 2.0, 2.5, 1.0, 1.5, 0.5, 0.75, 0.6, 0.9, 1.0), 2),
]
MIN_DELTA = [
    # a tie at exactly min_delta (call 2), a worse one (3), a real improvement (4), one by less than
    # min_delta (5) that must not move best, then one that beats the unmoved best (6)
    Scenario((1.0, 0.75, 0.625, 0.6875, 0.59375, 0.5, 0.40625, 0.4375, 0.375), LONG, 0.125),
    Scenario((2.0, 1.5, 1.5, 1.25, 1.25, 1.5, 1.0), LONG, 0.0),  # min_delta 0: an equal metric is no improvement
    Scenario((4e12, 2e12, 3e12, 1e12, 1.5e12), LONG, 0.5),  # the first call improves however large
]
# All improvements come first, then calls that improve by less than min_delta: when step returns
# True depends on min_delta alone (and on the solution's own patience count, measured on CONTROL).
MIN_DELTA_TIMING = Scenario((1.0, 0.75, 0.5, 0.4375, 0.46875, 0.40625, 0.5, 0.6, 0.7, 0.8), 3, 0.125)
CONTROL = Scenario((1.0, 0.75, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25), 3)
# A metric that gets better by half of min_delta every call: the contract never stops on it (every other
# call improves), nor does a stopper that ignores min_delta; one whose best moves on each small gain
# stops at call 3. Played only to tell those two apart: their best moves alike on every other scenario.
CREEP = Scenario((1.0, 0.9375, 0.875, 0.8125, 0.75, 0.6875, 0.625, 0.5625), 3, 0.125)
MODE_MAX = [
    Scenario((50.0, 60.0, 60.5, 60.25, 61.0, 61.25, 62.0, 59.0), LONG, 0.5, "max"),  # accuracy in %
    Scenario((-3.5, -2.25, -2.5, -1.75, -1.75, -2.0), LONG, 0.0, "max"),  # a log-likelihood: below 0
]
BEST = [PLOT, MIN_DELTA[0], *MODE_MAX]
# (scenario, index of the first non-finite metric); the same value repeats after it, to see
# whether a solution that goes on stops patience calls later.
NON_FINITE = [(Scenario(prefix + (bad,) * 5, 3, 0.0, mode), len(prefix)) for prefix, bad, mode in [
    ((1.0, 0.5), NAN, "min"), ((1.0, 0.5, 0.75), INF, "min"), ((1.0,), -INF, "min"),
    ((0.5,), INF, "max"), ((0.5, 0.75), NAN, "max"), ((), NAN, "min"), ((), INF, "min"), ((), -INF, "max"),
]]
RESTORE = [
    Scenario((1.0, 0.5, 0.25, 0.375, 0.5, 0.75, 1.0, 1.25), 2),  # stops at 4, best 2
    Scenario((0.5, 0.625, 0.75, 0.7, 0.6, 0.55, 0.5, 0.45), 3, 0.0, "max"),  # stops at 5, best 2
    Scenario((1.0, 0.5, 0.75, NAN, NAN, NAN, NAN, NAN), 3),  # a NaN stops at 3, best 1
    # 0.895 beats 0.9 by less than min_delta (far from a tie, so rounding cannot matter): no improvement,
    # so it saved nothing, though a checkpoint kept at every better metric holds it; stops at 3, best 1
    Scenario((1.0, 0.9, 0.895, 0.95, 0.97), 2, 0.01),
]
# 0.4999999 beats 0.5 by 1e-7: an improvement with the default min_delta 0 only; stops at 7.
DEFAULTS = Scenario((1.0, 0.5, 0.4999999, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3), 5)
