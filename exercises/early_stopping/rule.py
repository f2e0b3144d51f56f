"""The contract's stopping rule in plain Python, and the usual mistakes as variants of it: every
check expects what `run` gives with `CONTRACT`, and names a mistake when a solution's calls match
what `run` gives with one of the variants."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Rule:
    """How a stopper decides; the defaults are the contract's."""

    delta: str = "abs"            # how min_delta enters: abs | wrong-way | rel | ignored
    max_delta: str | None = None  # the same for mode="max" where it differs (None: as `delta`)
    ties: bool = False            # a metric exactly min_delta better counts as an improvement
    ignore_mode: bool = False     # lower is better whatever the mode
    creep: bool = False           # best follows every better metric, improvement or not
    follow: bool = False          # best and best_epoch follow every better metric; the count as min_delta says
    reset_on_better: bool = False  # any better metric restarts the count of calls without improvement
    start: float | None = None    # best before the first call; None: the first call always improves
    late: int = 0                 # True this many calls after the patience-th call without improvement
    reset: bool = True            # an improvement restarts the count


CONTRACT = Rule()


@dataclass
class Call:
    improved: bool
    best: float | None
    best_epoch: int | None
    stop: bool
    moved: tuple = (False, False)  # (best changed, best_epoch changed): what a solution's attributes show


def beats(metric: float, best: float, min_delta: float, mode: str, rule: Rule = CONTRACT) -> bool:
    """Whether `metric` counts as an improvement on `best` under `rule`."""
    maximize = mode == "max" and not rule.ignore_mode
    how = rule.max_delta if maximize and rule.max_delta else rule.delta
    if maximize:  # negation is exact: compare as if lower were better
        metric, best = -metric, -best
    threshold = {"abs": best - min_delta, "wrong-way": best + min_delta,
                 "rel": best - abs(best) * min_delta, "ignored": best}[how]
    return metric <= threshold if rule.ties else metric < threshold


def run(metrics, patience: int, min_delta: float, mode: str, rule: Rule = CONTRACT) -> list[Call]:
    """Every call's outcome, as if the caller went on after a True (the checks need the best state
    at whichever call a solution stops). A non-finite metric stops at once and changes nothing."""
    best, best_epoch, bad, calls = rule.start, None, 0, []
    before = (rule.start, None)
    raw = replace(CONTRACT, ignore_mode=rule.ignore_mode)
    for i, metric in enumerate(metrics):
        if not math.isfinite(metric):
            calls.append(Call(False, best, best_epoch, True))
            continue
        improved = best is None or beats(metric, best, min_delta, mode, rule)
        if improved:
            best, best_epoch = metric, i
            bad = 0 if rule.reset else bad
        else:
            better = best is not None and beats(metric, best, 0.0, mode, raw)
            if (rule.creep or rule.follow) and better:
                best = metric
            if rule.follow and better:
                best_epoch = i
            bad = 0 if rule.reset_on_better and better else bad + 1
        moved = (best != before[0], best_epoch != before[1])
        before = (best, best_epoch)
        calls.append(Call(improved, best, best_epoch, bad >= patience + rule.late, moved))
    return calls


def first_stop(calls: list[Call]) -> int | None:
    return next((i for i, c in enumerate(calls) if c.stop), None)


# Mistakes, each named as the learner would fix it.
MIN_DELTA_MISTAKES = {
    "min_delta is applied the wrong way round (metric < best + min_delta), so a metric slightly worse "
    "than best counts as an improvement": Rule(delta="wrong-way"),
    "a metric exactly min_delta better than best counts (<= where the rule is <: it must beat best by "
    "more than min_delta)": Rule(ties=True),
    "min_delta is taken relative to best (best * (1 - min_delta), ReduceLROnPlateau's "
    "threshold_mode='rel'); here it is an absolute amount": Rule(delta="rel"),
    "min_delta is ignored: any better metric counts as an improvement and restarts the count, so a metric "
    "that keeps getting better by less than min_delta per call never stops training": Rule(delta="ignored"),
    "best moves on small gains: best and best_epoch follow every better metric, and only a gain of more "
    "than min_delta restarts the count (ignite's cumulative_delta=False, the HF Trainer's best_metric). "
    "Gains that add up to more than min_delta then never count, so a slowly improving metric stops earlier "
    "than it should; a metric within min_delta of best is no improvement and leaves best alone": Rule(follow=True),
    "best moves to every better metric, also one that beat it by less than min_delta, so later metrics "
    "are compared with that one; such a metric is no improvement and leaves best alone": Rule(creep=True),
    "the count of calls without improvement restarts at any better metric, even one within min_delta of "
    "best; such a metric is a call without improvement like any other": Rule(reset_on_better=True),
}

MODE_MISTAKES = {
    "mode is ignored: lower counts as better in mode='max' too": Rule(ignore_mode=True),
    "in mode='max' min_delta works the wrong way (metric > best - min_delta); there an improvement "
    "needs metric > best + min_delta": Rule(max_delta="wrong-way"),
    "min_delta is applied in mode='min' only; in mode='max' an improvement needs metric > best + "
    "min_delta": Rule(max_delta="ignored"),
    "best starts at 0, so in mode='max' negative metrics (a log-likelihood, say) never improve; the "
    "first call always improves (start at -inf for 'max', +inf for 'min', or at None)": Rule(start=0.0),
    "best starts at +inf in mode='max', which nothing can beat; start at -inf there (or at None: the "
    "first call always improves)": Rule(start=math.inf),
}

PATIENCE_MISTAKES = {
    "it stops one call late: True when the count of calls without improvement *exceeds* patience "
    "(count > patience, as torch's ReduceLROnPlateau counts); stop when it *reaches* patience": Rule(late=1),
    "it stops one call early: True when the count of calls without improvement reaches patience - 1; "
    "stop when it reaches patience": Rule(late=-1),
    "the count of calls without improvement is not reset to 0 by an improvement, so bad calls from "
    "before it still count": Rule(reset=False),
}


ANY = object()


@dataclass(frozen=True)
class Seen:
    """What a solution did on one scenario: per call, whether best and best_epoch moved (as far as it
    went), and where it first returned True (None: never; ANY: not compared)."""

    metrics: tuple
    patience: int
    min_delta: float
    mode: str
    moved: tuple | None = None
    stop: object = ANY


def same_moves(expected, seen) -> bool:
    """Whether a solution's (best moved, best_epoch moved) pairs are those expected, as far as it went;
    call 0's best_epoch is left out (a solution may start it at 0, and then it does not move)."""
    return all(e[0] == s[0] and (i == 0 or e[1] == s[1]) for i, (e, s) in enumerate(zip(expected, seen)))


def explain(mistakes: dict, seen: list, late: int = 0) -> str:
    """' That matches a stopper where WHY.' for the first mistake that does what the solution did on
    every scenario in `seen`, with `late` calls of the solution's own lateness added; else ''."""
    for why, rule in mistakes.items():
        for s in seen:
            calls = run(s.metrics, s.patience, s.min_delta, s.mode, replace(rule, late=rule.late + late))
            if s.moved is not None and not same_moves([c.moved for c in calls], s.moved):
                break
            if s.stop is not ANY and first_stop(calls) != s.stop:
                break
        else:
            return f" That matches a stopper where {why}."
    return ""
