"""Whether the rounds a job has still to run could change a verdict, and the verdict of rounds that do not settle it.

For jobs that run up to a fixed number of rounds and decide on medians (verify/measure/trials.py,
`median_range`, gives the range a median could still reach): each rule's side is True (it holds whatever
the rest measure), False (it fails whatever they measure) or None (still open). The job stops once no rule is
open, and a rule decides nothing from rounds that leave it open.
"""

from __future__ import annotations

from typing import Callable


def report(done: int, most: int, sides: Callable[[], dict[str, bool | None]], unit: str = "rounds") -> dict:
    """The stopping report a record keeps: rounds done, the most there can be, settled or not, and why."""
    if done < most and 2 * done <= most:
        # The rest could still put any value in the middle: no median is bounded yet.
        return {unit: done, f"max_{unit}": most, "settled": False, "why": f"too few {unit} to bound a median"}
    known = sides()
    return {unit: done, f"max_{unit}": most, "settled": done >= most or all(v is not None for v in known.values()),
            "why": "; ".join(f"{k}: {'open' if v is None else 'holds' if v else 'fails'}" for k, v in known.items())}


def open_because(stop: dict, unit: str = "rounds") -> str | None:
    """Why the rounds recorded settle nothing (the rules are then inconclusive); None when they settle them."""
    if stop["settled"]:
        return None
    return f"{stop[unit]} of up to {stop[f'max_{unit}']} {unit}, which do not settle the medians ({stop['why']})"
