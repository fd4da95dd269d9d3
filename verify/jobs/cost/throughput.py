"""Throughput against concurrency on this server, and the cost per million tokens it implies.

The data is the concurrency sweep (verify/jobs/prefill_decode/_sweep.py), which the Prefill vs
Decode article's batching job reads too: at each concurrency, that many identical streaming
requests of the same length start together, in up to ROUNDS interleaved rounds that stop once the
rest could not change a verdict of either job; a record with fewer rounds that do not settle this
job's rules is inconclusive. A round's throughput is the tokens generated (every request runs to
max_tokens) over the time the last request's last line came. The cost per million generated
tokens comes from the page's snippet, at an hourly price that is an assumption stated in this
file, not a measurement.
"""

from __future__ import annotations

import statistics

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import Claim, Job, verdict_if
from verify.jobs.prefill_decode import _sweep

SNIPPET = "cost/cost_per_million.py"
LEVELS, ROUNDS = _sweep.CONCURRENCY, _sweep.ROUNDS
# An assumed price for a 2-core machine like this one, in dollars per hour: an input of the arithmetic,
# shown on the page as an assumption. Change it to your own price; the verdicts do not depend on it.
ASSUMED_PRICE_PER_HOUR = 0.10
# "Rises with concurrency": each level's median throughput above the previous level's by this factor.
RISE_FACTOR = 1.2
# "Cost falls": one at a time costs more than this many times as much as LEVELS[-1] at once. Two runs on a
# 2-core AVX2 machine gave 2.7x and 3.3x (0.27.0), 4.0x and 4.7x (0.32.0): 2 is the factor every run
# supports, with the spread between runs as margin.
COST_FACTOR = 2.0


def collect(ctx) -> dict:
    d = _sweep.measure(ctx, JOB.id)
    snippet = ctx.snippet(SNIPPET)
    return {**d, "price_per_hour": ASSUMED_PRICE_PER_HOUR,
            "cost_per_million": {str(c): round(snippet.cost_per_million(ASSUMED_PRICE_PER_HOUR, t["median"]), 4)
                                 for c, t in throughput(d).items()}}


def rounds(d) -> int:
    return _sweep.rounds(d)


def throughput(d) -> dict[int, dict]:
    out = {}
    for c in LEVELS:
        values = _sweep.throughputs(d, c)
        out[c] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def _bounds(d) -> dict[int, tuple[float, float]]:
    """Per level, the least and greatest median ROUNDS rounds could still reach, given the rounds recorded."""
    from verify.measure.trials import median_range
    return {c: median_range(_sweep.throughputs(d, c), ROUNDS) for c in LEVELS}


def _rises_side(b: dict[int, tuple[float, float]]) -> bool | None:
    """The verdict of "rises" whatever the remaining rounds measure (None: they could still change it)."""
    pairs = list(zip(LEVELS, LEVELS[1:]))
    if all(b[y][0] > RISE_FACTOR * b[x][1] for x, y in pairs):
        return True
    if any(b[y][1] <= RISE_FACTOR * b[x][0] for x, y in pairs):
        return False
    return None


def _falls_side(b: dict[int, tuple[float, float]]) -> bool | None:
    """The verdict of "cost falls" (one alone's cost over the top level's above COST_FACTOR, i.e. the top
    level's median throughput above COST_FACTOR times one alone's) whatever the remaining rounds measure."""
    # Products, not quotients: a throughput exactly COST_FACTOR times another compares equal to it.
    top, one = b[LEVELS[-1]], b[LEVELS[0]]
    return True if top[0] > COST_FACTOR * one[1] else False if top[1] <= COST_FACTOR * one[0] else None


def settled(d) -> dict:
    """Whether the rounds still to run (up to ROUNDS) could change a verdict."""
    from verify.measure.settling import report

    def sides() -> dict:
        b = _bounds(d)
        return {"rises": _rises_side(b), "cost falls": _falls_side(b)}
    return report(rounds(d), ROUNDS, sides)


def _unsettled(d):
    from verify.measure.settling import open_because
    why = open_because(settled(d))
    return verdict_if(None, why) if why else None


def decide_rises(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
    t = throughput(d)
    ok = all(t[b]["median"] > RISE_FACTOR * t[a]["median"] for a, b in zip(LEVELS, LEVELS[1:]))
    return verdict_if(ok, "median tokens per second over " + f"{rounds(d)} rounds: " +
                      ", ".join(f"{c} at once {t[c]['median']:.0f} (range {t[c]['min']:.0f} to {t[c]['max']:.0f})"
                                for c in LEVELS) + f"; each level above the previous by {RISE_FACTOR}x required")


def decide_cost_falls(d):
    """From the raw rounds: the cost of a million tokens is the hour's price over the tokens the hour
    generates at each level's median throughput. The page's snippet made the recorded costs; they
    must be that arithmetic, or the snippet the page shows is not what decided."""
    t = throughput(d)
    cost = {c: d["price_per_hour"] / (t[c]["median"] * 3600) * 1_000_000 for c in LEVELS}
    snippet_cost = {int(c): v for c, v in d["cost_per_million"].items()}
    if any(abs(snippet_cost[c] - cost[c]) > 1e-3 * cost[c] + 1e-4 for c in LEVELS):
        raise ValueError(f"the snippet's costs {snippet_cost} are not the measured throughput's {cost}")
    if (open_ := _unsettled(d)) is not None:
        return open_
    ratio = cost[LEVELS[0]] / cost[LEVELS[-1]]
    return verdict_if(t[LEVELS[-1]]["median"] > COST_FACTOR * t[LEVELS[0]]["median"], f"at ${d['price_per_hour']:.2f}/hour (assumed): ${cost[LEVELS[0]]:.2f} per million "
                                 f"tokens one request at a time, ${cost[LEVELS[-1]]:.2f} with {LEVELS[-1]} at once "
                                 f"({ratio:.1f}x cheaper, above {COST_FACTOR:g}x required; median throughput of {rounds(d)} rounds)")


# --- headline figures

def _throughput_at(concurrency: int):
    return lambda d: throughput(d)[concurrency]["median"]


HEADLINE = Headline({f"throughput at {c} concurrent request{'s' if c > 1 else ''}, median": _throughput_at(c)
                     for c in LEVELS}, TIMING_TOLERANCE, TIMING_WHY, "tokens/s")


JOB = Job(
    id="throughput",
    title="Throughput and cost per token against concurrency",
    question="How many tokens per second does this server generate at 1, 2, 4 and 8 requests at once, and what does "
             "that make a million tokens cost?",
    pages=("cost.md",),
    collect=collect,
    claims=(
        Claim("throughput.rises-with-concurrency", "Throughput rises with each doubling of the requests running at "
              "once, from 1 to 8.", decide_rises, timing=True),
        Claim("throughput.cost-falls", "So the cost of a million tokens falls: with 8 at once it is less than "
              "half of one at a time.", decide_cost_falls, timing=True),
    ),
    headline=HEADLINE,
)
