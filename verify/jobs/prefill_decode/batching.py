"""What batching does to one request's inter-token latency and to total throughput.

The data is the concurrency sweep (verify/jobs/prefill_decode/_sweep.py), which the Cost per Token
article's throughput job reads too: up to ROUNDS interleaved rounds of 1, 2, 4 and 8 requests at
once, stopping once the rest could not change a verdict of either job. The rules decide on medians
over the rounds; a record of fewer rounds that do not settle this job's rules is inconclusive.
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, ms
from verify.job import Claim, Job, verdict_if
from verify.jobs.prefill_decode import _sweep

CONCURRENCY, ROUNDS, MAX_TOKENS = _sweep.CONCURRENCY, _sweep.ROUNDS, _sweep.MAX_TOKENS
# Throughput at the highest concurrency must be at least this many times that of one request alone.
THROUGHPUT_GAIN = 2.0
# One request's ITL at the highest concurrency must be at least this much above its ITL alone.
ITL_RISE = 0.10


def collect(ctx) -> dict:
    return _sweep.measure(ctx, JOB.id)


def by_concurrency(d) -> list[dict]:
    from statistics import median
    out = []
    for n in CONCURRENCY:
        per_run_tput, itls = _per_run(d, n)
        out.append({"concurrency": n, "throughput": median(per_run_tput), "itl": median(itls),
                    "itl_min": min(itls), "itl_max": max(itls), "rounds": len(per_run_tput)})
    return out


def _per_run(d, n: int) -> tuple[list[float], list[float]]:
    """At concurrency n: each round's throughput, and every request's ITL."""
    itls = [_sweep.request_figures(r)["itl"] for run in d["runs"] if run["concurrency"] == n for r in run["requests"]]
    return _sweep.throughputs(d, n), itls


def _side(lo: float, hi: float, threshold: float) -> bool | None:
    """At least threshold whatever the remaining rounds measure (True), below it whatever they measure
    (False), or still open (None)."""
    return True if lo >= threshold else False if hi < threshold else None


def settled(d) -> dict:
    """Whether the rounds still to run (up to ROUNDS) could change a verdict: each rule's ratio of the
    top concurrency's median to one alone's, at the least and greatest the medians of ROUNDS rounds
    could still reach."""
    from verify.measure.settling import report
    from verify.measure.trials import median_range
    one, top = CONCURRENCY[0], CONCURRENCY[-1]
    (t1, i1), (tn, i_n) = _per_run(d, one), _per_run(d, top)
    rounds = min(len(t1), len(tn))

    def sides() -> dict:
        t1r, tnr = median_range(t1, ROUNDS), median_range(tn, ROUNDS)
        i1r, inr = median_range(i1, ROUNDS * one), median_range(i_n, ROUNDS * top)
        return {"throughput": _side(tnr[0] / t1r[1], tnr[1] / t1r[0], THROUGHPUT_GAIN),
                "itl": _side(inr[0] / i1r[1] - 1, inr[1] / i1r[0] - 1, ITL_RISE)}
    return report(rounds, ROUNDS, sides)


def _unsettled(d):
    from verify.measure.settling import open_because
    why = open_because(settled(d))
    return verdict_if(None, why) if why else None


def decide_throughput(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
    rows = by_concurrency(d)
    gain = rows[-1]["throughput"] / rows[0]["throughput"]
    return verdict_if(gain >= THROUGHPUT_GAIN, "output tokens per second: " + ", ".join(
        f"{r['concurrency']} at once: {r['throughput']:.0f}" for r in rows) +
        f"; {rows[-1]['concurrency']} at once gives {gain:.1f}x one alone (at least {THROUGHPUT_GAIN:.0f}x required)")


def decide_itl(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
    rows = by_concurrency(d)
    rise = rows[-1]["itl"] / rows[0]["itl"] - 1
    return verdict_if(rise >= ITL_RISE, "median inter-token latency per request: " + ", ".join(
        f"{r['concurrency']} at once: {r['itl'] * 1000:.1f} ms" for r in rows) +
        f"; {rise:+.0%} at {rows[-1]['concurrency']} against 1 (a rise means at least {ITL_RISE:+.0%})")


# --- headline figures

def _batching_row(d, concurrency: int) -> dict:
    return next(r for r in by_concurrency(d) if r["concurrency"] == concurrency)


HEADLINE = Headline({
    "throughput, one request alone (tokens/s)": lambda d: _batching_row(d, 1)["throughput"],
    f"throughput, {CONCURRENCY[-1]} requests at once (tokens/s)":
        lambda d: _batching_row(d, CONCURRENCY[-1])["throughput"],
    "inter-token latency per request, one request alone, median (ms)": lambda d: ms(_batching_row(d, 1)["itl"]),
    f"inter-token latency per request, {CONCURRENCY[-1]} requests at once, median (ms)":
        lambda d: ms(_batching_row(d, CONCURRENCY[-1])["itl"]),
}, TIMING_TOLERANCE, TIMING_WHY)

JOB = Job(
    id="batching",
    title="Batching: throughput against one request's latency",
    question="What does serving several requests at once do to one request's inter-token latency and to total "
             "throughput?",
    pages=("prefill-decode.md",),
    collect=collect,
    claims=(
        Claim("batching.throughput-rises", "Serving several requests at once multiplies total throughput: a decode "
              "step for eight requests costs little more than for one.", decide_throughput, timing=True),
        Claim("batching.itl-rises", "With eight requests at once, each request's inter-token latency is higher than "
              "with one alone.", decide_itl, timing=True),
    ),
    headline=HEADLINE,
)
