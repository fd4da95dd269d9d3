"""Edits of the concurrency sweep's raw streams (verify/jobs/prefill_decode/_sweep.py), for the rules that read it."""

from __future__ import annotations

from tests.rules._records import exactly
from verify.jobs.prefill_decode import _sweep


def rounds_of(data: dict) -> list[list[dict]]:
    """The sweep's runs by round, each round's runs in level order (1, 2, 4, 8 at once)."""
    by_level = {c: [r for r in data["runs"] if r["concurrency"] == c] for c in _sweep.CONCURRENCY}
    return [[by_level[c][i] for c in _sweep.CONCURRENCY] for i in range(_sweep.rounds(data))]


def rate(run: dict) -> float:
    """A run's tokens per second, as the rules compute it."""
    return _sweep.run_throughput(run)


def last_line(run: dict) -> float:
    """When the run's last request's last data line came (the time its throughput divides by)."""
    return max(_sweep.request_figures(r)["last"] for r in run["requests"])


def retime(run: dict, tokens_per_s: float, to_the_bit: bool = False) -> None:
    """Every line of the run's requests moved in proportion so that its throughput is tokens_per_s; to_the_bit:
    the latest data line lands on a time that gives exactly that rate (for edits that sit on a threshold)."""
    tokens = run["concurrency"] * _sweep.MAX_TOKENS
    target = tokens / tokens_per_s
    if to_the_bit:
        target = exactly(lambda s: tokens / s, tokens_per_s, target)
    set_last(run, target)


def set_last(run: dict, target: float) -> None:
    """Every line of the run moved in proportion so that its latest data line comes at `target` exactly."""
    factor = target / last_line(run)
    for r in run["requests"]:
        for x in r["lines"]:
            x["t"] = x["t"] * factor
    for r in run["requests"]:  # rounding may leave a line a few ulps either side of the target
        data = [x for x in r["lines"] if x["line"].startswith("data: {")]
        if data[-1]["t"] > target or r is max(run["requests"], key=lambda q: _sweep.request_figures(q)["last"]):
            data[-1]["t"] = target
    assert last_line(run) == target
