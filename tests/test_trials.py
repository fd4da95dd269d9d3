"""Timing trials that stop once the verdict is settled (verify/measure/trials.py)."""

from __future__ import annotations

from verify.measure.trials import clear_of, median_interval, until_settled


def test_the_median_interval_needs_enough_values_for_its_confidence():
    # With 5 values, [min, max] holds the median with 1 - 2/32 = 93.75 % confidence.
    assert median_interval([5, 1, 4, 2, 3], 0.90) == (1, 5)
    assert median_interval([1, 2, 3], 0.90) is None  # 75 % at most
    # With 9 values at 90 %, the 2nd and 8th smallest (1 - 2 * 10/512 = 96 %).
    assert median_interval(list(range(9)), 0.90) == (1, 7)


def test_clear_of_says_which_side_or_nothing():
    assert "below 10" in clear_of([1, 2, 3, 4, 5], 10, 0.9, "x")
    assert "above 0" in clear_of([1, 2, 3, 4, 5], 0, 0.9, "x")
    assert clear_of([1, 2, 3, 4, 5], 3, 0.9, "x") is None


def test_trials_stop_at_the_minimum_once_settled_and_run_to_the_maximum_otherwise():
    values = []

    def steady(i):
        values.append(1.0 + i * 0.01)
        return values[-1]
    trials, why = until_settled(steady, lambda t: [clear_of(t, 2.0, 0.9, "t")], 5, 9)
    assert len(trials) == 5 and why["settled"] and "below 2" in why["why"][0]
    # Values on both sides of the threshold never settle: every trial up to the maximum runs.
    trials, why = until_settled(lambda i: [1.0, 3.0][i % 2], lambda t: [clear_of(t, 2.0, 0.9, "t")], 5, 9)
    assert len(trials) == 9 and not why["settled"] and why["why"] == ["not settled"]


def test_median_range_bounds_the_median_the_remaining_values_could_give():
    from itertools import product
    from statistics import median

    from verify.measure.trials import median_range
    known = [1.0, 3.0]
    lo, hi = median_range(known, 3)
    assert (lo, hi) == (1.0, 3.0)
    # Every third value gives a median inside the range, and the bounds are reached.
    medians = [median(known + [x]) for x in (-10.0, 0.0, 2.0, 5.0, 10.0)]
    assert min(medians) == lo and max(medians) == hi
    # Two unknown of four: nothing is settled yet.
    assert median_range(known, 4) == (float("-inf"), float("inf"))
    # With every value known, the range is the median itself.
    assert median_range([1.0, 2.0, 9.0], 3) == (2.0, 2.0)
    # Brute force over small integers: the bounds are exact.
    for a, b in product(range(4), repeat=2):
        got = [median([a, b, c, d]) for c, d in product(range(-2, 7), repeat=2)]
        lo, hi = median_range([a, b], 4)
        assert lo <= min(got) and max(got) <= hi
    import pytest
    with pytest.raises(ValueError):
        median_range([1.0, 2.0], 1)
