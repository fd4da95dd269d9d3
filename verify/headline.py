"""A job's headline figures: the numbers a comparison of two records watches.

A job declares them beside its claims (`Job(headline=Headline(...))`): one getter per
figure reading the record's data, and how far the figures may move between two
records before the move counts. The page comparing vLLM releases lists every figure
that moved beyond its job's tolerance (verify/verdicts/releases.py).

A figure a complete record cannot give is an error that names the figure
(`FigureMissing`), not a silent gap; only a record whose capture failed, which the
comparison skips, may lack figures.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

# Timings (wall-clock or CPU time) on the shared 2-core CPU machine: the committed records
# of one release, made on the same CPU model on different days, put the same median up to
# about 30 % apart, so only a larger move counts.
TIMING_TOLERANCE = 0.3
TIMING_WHY = "timings on a shared 2-core machine move this much between runs of one release (TIMING_TOLERANCE)"
# Token and block counts, sizes and limits are exact: any change is a change.
EXACT = 0.0

# What reading a figure from data that cannot give it raises.
FAILED = (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, AttributeError,
          StopIteration, statistics.StatisticsError)


class FigureMissing(ValueError):
    """A record's data cannot give one of its job's headline figures."""


@dataclass(frozen=True)
class Headline:
    getters: dict[str, Callable[[dict], float]]  # figure name -> getter(record data) -> number
    tolerance: float  # relative change allowed before a figure counts as moved
    why: str  # why this tolerance
    unit: str = ""  # shown after the numbers; "" when the names carry their own units

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.getters)

    def read(self, data: dict) -> dict[str, float]:
        """Every figure from the data, or FigureMissing naming the first one it cannot give."""
        out = {}
        for name, get in self.getters.items():
            try:
                raw = get(data)
                value = float(raw)
            except FAILED as e:
                raise FigureMissing(f"figure {name!r}: {type(e).__name__}: {e}") from e
            if isinstance(raw, bool) or not math.isfinite(value):
                raise FigureMissing(f"figure {name!r}: {value!r} is not a finite number")
            out[name] = value
        return out


def median(values) -> float:
    """The median of the readings a capture gave (a reading it did not get, None, left out)."""
    return statistics.median([v for v in values if v is not None])


def ms(seconds: float) -> float:
    return seconds * 1000


def moved(headline: Headline, before: dict, after: dict) -> list[dict]:
    """Figures whose relative change between two data dicts exceeds the tolerance:
    [{"name", "before", "after", "change" (relative, signed, rounded), "tolerance", "unit"}], sorted by name.
    A figure that was 0 before has no relative change: it counts as moved when it is no longer 0 (change None)."""
    a, b = headline.read(before), headline.read(after)
    out = []
    for name in sorted(a.keys() & b.keys()):
        x, y = a[name], b[name]
        if x == 0:
            if y == x:
                continue
            change = None
        else:
            change = (y - x) / abs(x)
            if abs(change) <= headline.tolerance:
                continue
            change = float(f"{change:.3g}")
        out.append({"name": name, "before": round(x, 3), "after": round(y, 3), "change": change,
                    "tolerance": headline.tolerance, "unit": headline.unit})
    return out
