"""Summaries of repeated timing samples: medians and spread, never a single run."""

from __future__ import annotations

import statistics


def summary(samples: list[float]) -> dict:
    s = sorted(samples)
    if not s:
        return {"n": 0}
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else [s[0], s[0], s[0]]
    return {"n": len(s), "median": round(statistics.median(s), 4), "min": round(s[0], 4),
            "max": round(s[-1], 4), "p25": round(q[0], 4), "p75": round(q[2], 4),
            "iqr": round(q[2] - q[0], 4)}


def relative_difference(a: float, b: float) -> float:
    """|a - b| relative to the larger of the two."""
    return abs(a - b) / max(abs(a), abs(b)) if max(abs(a), abs(b)) else 0.0
