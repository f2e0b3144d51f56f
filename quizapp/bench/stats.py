"""The statistics of a timing, as kernel leaderboards take them: many samples after a warm-up, the
median as the figure, and repetition until the standard error of the mean is under a set share of the
mean (1% by default) or a time cap is reached. No torch here."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterable


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    median: float
    stdev: float  # the sample standard deviation (n - 1); 0 for one sample
    sem: float  # standard error of the mean: stdev / sqrt(n); inf for fewer than two samples
    rel_se: float  # sem / mean; inf when it cannot be told
    minimum: float
    maximum: float

    def to_json(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


def summarize(samples: Iterable[float]) -> Summary:
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("no samples to summarize")
    if any(not math.isfinite(v) for v in values):
        raise ValueError("a sample is not a finite number")
    n = len(values)
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else 0.0
    sem = stdev / math.sqrt(n) if n > 1 else math.inf
    rel_se = sem / mean if mean > 0 and math.isfinite(sem) else math.inf
    return Summary(n=n, mean=mean, median=statistics.median(values), stdev=stdev, sem=sem, rel_se=rel_se,
                   minimum=min(values), maximum=max(values))


@dataclass(frozen=True)
class Measurement:
    summary: Summary
    runs: int
    converged: bool  # the standard error fell under the target share of the mean
    stopped_by: str  # "standard error", "time cap" or "run cap"
    samples: tuple[float, ...]

    def to_json(self) -> dict:
        return {"summary": self.summary.to_json(), "runs": self.runs, "converged": self.converged,
                "stopped_by": self.stopped_by, "samples": list(self.samples)}


def measure_until(run_once: Callable[[], Iterable[float]], *, rel_se: float = 0.01, min_runs: int = 3,
                  max_runs: int = 200, time_cap: float = 20.0,
                  clock: Callable[[], float] = time.perf_counter) -> Measurement:
    """Call `run_once` (which returns one or more samples, in seconds) at least `min_runs` times, then
    until the standard error of all samples so far is at most `rel_se` of their mean, `time_cap` seconds
    have passed, or `max_runs` runs were made, whichever comes first."""
    if min_runs < 1 or max_runs < min_runs:
        raise ValueError("need 1 <= min_runs <= max_runs")
    samples: list[float] = []
    start = clock()
    runs = 0
    while True:
        got = [float(s) for s in run_once()]
        if not got:
            raise ValueError("a run gave no samples")
        samples.extend(got)
        runs += 1
        summary = summarize(samples)
        if runs < min_runs:
            continue
        if summary.rel_se <= rel_se:
            return Measurement(summary, runs, True, "standard error", tuple(samples))
        if clock() - start >= time_cap:
            return Measurement(summary, runs, False, "time cap", tuple(samples))
        if runs >= max_runs:
            return Measurement(summary, runs, False, "run cap", tuple(samples))


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, or None when either is missing or the denominator is not positive."""
    if numerator is None or denominator is None or not denominator > 0:
        return None
    return numerator / denominator
