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
