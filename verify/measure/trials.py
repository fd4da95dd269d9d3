"""Timing trials that stop once the verdict is settled.

A timing claim compares a median with a threshold. A job runs at least
`min_trials`, then stops as soon as every statistic its rules use is clear of its
threshold with the declared confidence, or at `max_trials`. "Clear" means a
distribution-free confidence interval for the median (from order statistics, as
in the sign test: it assumes nothing about the shape of the timings) lies wholly
on one side of the threshold. The record keeps every trial and why the trials
stopped; the rules still decide from all of them.
"""

from __future__ import annotations

from math import comb
from typing import Callable, TypeVar

T = TypeVar("T")


def median_interval(values: list[float], confidence: float) -> tuple[float, float] | None:
    """The order-statistic interval that holds the true median with at least this confidence (None: too few values)."""
    n, s = len(values), sorted(values)
    alpha_half, tail, k = (1 - confidence) / 2, 0.0, -1
    for j in range(n):
        p = comb(n, j) / 2 ** n
        if tail + p > alpha_half:
            break
        tail, k = tail + p, j
    if k < 0 or k > n - 1 - k:
        return None
    return s[k], s[n - 1 - k]


def clear_of(values: list[float], threshold: float, confidence: float, name: str) -> str | None:
    """Why the median of values is settled against threshold, or None while it is not."""
    interval = median_interval(values, confidence)
    if interval is None:
        return None
    lo, hi = interval
    if hi < threshold:
        side = "below"
    elif lo > threshold:
        side = "above"
    else:
        return None
    return f"{name}: the {confidence:.0%} interval of the median ({lo:.4g} to {hi:.4g}) is {side} {threshold:.4g}"


def until_settled(trial: Callable[[int], T], settled: Callable[[list[T]], list[str | None]], min_trials: int,
                  max_trials: int) -> tuple[list[T], dict]:
    """Run trial(i) until every reason settled() gives is set (after min_trials) or max_trials ran.

    Returns the trials and why they stopped, for the record.
    """
    trials: list[T] = []
    while len(trials) < max_trials:
        trials.append(trial(len(trials)))
        if len(trials) >= min_trials:
            reasons = settled(trials)
            if reasons and all(reasons):
                return trials, {"trials": len(trials), "min_trials": min_trials, "max_trials": max_trials,
                                "settled": True, "why": reasons}
    reasons = settled(trials)
    return trials, {"trials": len(trials), "min_trials": min_trials, "max_trials": max_trials, "settled": False,
                    "why": [r or "not settled" for r in reasons]}


def median_range(known: list[float], total: int) -> tuple[float, float]:
    """The least and the greatest median that `total` values could have when `known` are some of them.

    For rules that decide on the median of a fixed number of rounds: once the remaining rounds could
    not move the median across a threshold whatever they measure (the range lies on one side of it),
    running them would not change the verdict, and the rounds can stop.
    """
    import statistics
    rest = total - len(known)
    if rest < 0:
        raise ValueError(f"{len(known)} values known of {total}")
    if not known and rest:
        return float("-inf"), float("inf")
    return (statistics.median(list(known) + [float("-inf")] * rest),
            statistics.median(list(known) + [float("inf")] * rest))
