"""When the concurrency sweep (_sweep.py) has run enough rounds: once no verdict of either job that reads it
could change, whatever the rounds still to run (up to ROUNDS) measured.

The sweep is measured once for both readers, so its rounds must wait for both jobs' rules: each reader passes
`settled` to _sweep.measure. The thresholds those rules compare against are here, beside the stopping rules
that read them; batching.py and throughput.py decide their claims with the same constants.
"""

from __future__ import annotations

from verify.jobs.prefill_decode import _sweep

CONCURRENCY, ROUNDS = _sweep.CONCURRENCY, _sweep.ROUNDS

# batching: throughput at the highest concurrency must be at least this many times that of one request alone.
THROUGHPUT_GAIN = 2.0
# batching: one request's ITL at the highest concurrency must be at least this much above its ITL alone.
ITL_RISE = 0.10
# throughput, "rises with concurrency": each level's median throughput above the previous level's by this factor.
RISE_FACTOR = 1.2
# throughput, "cost falls": one at a time costs more than this many times as much as CONCURRENCY[-1] at once. Two
# runs on a 2-core AVX2 machine gave 2.7x and 3.3x (0.27.0), 4.0x and 4.7x (0.32.0): 2 is the factor every run
# supports, with the spread between runs as margin.
COST_FACTOR = 2.0


def settled(d) -> dict:
    """Every reader's stopping rule on the same rounds: settled once all of them are."""
    reports = {"batching": batching_settled(d), "throughput": throughput_settled(d)}
    return {"rounds": _sweep.rounds(d), "max_rounds": ROUNDS,
            "settled": all(r["settled"] for r in reports.values()),
            "why": "; ".join(f"{job}: {r['why']}" for job, r in reports.items())}


def _side(lo: float, hi: float, threshold: float) -> bool | None:
    """At least threshold whatever the remaining rounds measure (True), below it whatever they measure
    (False), or still open (None)."""
    return True if lo >= threshold else False if hi < threshold else None


def batching_settled(d) -> dict:
    """Whether the rounds still to run could change a verdict of batching: each rule's ratio of the top
    concurrency's median to one alone's, at the least and greatest the medians of ROUNDS rounds could
    still reach."""
    from verify.measure.settling import report
    from verify.measure.trials import median_range
    one, top = CONCURRENCY[0], CONCURRENCY[-1]
    (t1, i1), (tn, i_n) = _sweep.per_run(d, one), _sweep.per_run(d, top)
    rounds = min(len(t1), len(tn))

    def sides() -> dict:
        t1r, tnr = median_range(t1, ROUNDS), median_range(tn, ROUNDS)
        i1r, inr = median_range(i1, ROUNDS * one), median_range(i_n, ROUNDS * top)
        return {"throughput": _side(tnr[0] / t1r[1], tnr[1] / t1r[0], THROUGHPUT_GAIN),
                "itl": _side(inr[0] / i1r[1] - 1, inr[1] / i1r[0] - 1, ITL_RISE)}
    return report(rounds, ROUNDS, sides)


def _bounds(d) -> dict[int, tuple[float, float]]:
    """Per level, the least and greatest median ROUNDS rounds could still reach, given the rounds recorded."""
    from verify.measure.trials import median_range
    return {c: median_range(_sweep.throughputs(d, c), ROUNDS) for c in CONCURRENCY}


def _rises_side(b: dict[int, tuple[float, float]]) -> bool | None:
    """The verdict of "rises" whatever the remaining rounds measure (None: they could still change it)."""
    pairs = list(zip(CONCURRENCY, CONCURRENCY[1:]))
    if all(b[y][0] > RISE_FACTOR * b[x][1] for x, y in pairs):
        return True
    if any(b[y][1] <= RISE_FACTOR * b[x][0] for x, y in pairs):
        return False
    return None


def _falls_side(b: dict[int, tuple[float, float]]) -> bool | None:
    """The verdict of "cost falls" (one alone's cost over the top level's above COST_FACTOR, i.e. the top
    level's median throughput above COST_FACTOR times one alone's) whatever the remaining rounds measure."""
    # Products, not quotients: a throughput exactly COST_FACTOR times another compares equal to it.
    top, one = b[CONCURRENCY[-1]], b[CONCURRENCY[0]]
    return True if top[0] > COST_FACTOR * one[1] else False if top[1] <= COST_FACTOR * one[0] else None


def throughput_settled(d) -> dict:
    """Whether the rounds still to run could change a verdict of throughput."""
    from verify.measure.settling import report

    def sides() -> dict:
        b = _bounds(d)
        return {"rises": _rises_side(b), "cost falls": _falls_side(b)}
    return report(_sweep.rounds(d), ROUNDS, sides)
