"""Rounds that stop once the verdict is settled: batching, prompt-length-sweep, throughput, offline-vs-server.

Each case takes a committed record, keeps only its first rounds (as a run that stopped there would have
recorded them) and checks that the rules give what the recorded rounds allow: inconclusive while the
rounds still to run could change a verdict, the verdict of the full record once they could not.
"""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, decide, every_verdict, record
from tests.rules._sweep_edits import rate, retime, rounds_of
from verify.evidence import store
from verify.jobs.cost import throughput
from verify.jobs.offline import offline_vs_server
from verify.jobs.prefill_decode import _sweep as concurrency_sweep
from verify.jobs.prefill_decode import batching, prompt_length_sweep


def _batching(data: dict, rounds: int) -> None:
    data["runs"] = data["runs"][:rounds * len(batching.CONCURRENCY)]


def _sweep(data: dict, trials: int) -> None:
    data["runs"] = data["runs"][:trials * len(prompt_length_sweep.SENTENCES)]


def _throughput(data: dict, rounds: int) -> None:
    """The first rounds, with the costs the snippet gives for their medians (as collect() records them)."""
    data["runs"] = data["runs"][:rounds * len(throughput.LEVELS)]
    _costs(data)


def _costs(data: dict) -> None:
    # The page snippet's arithmetic: the hour's price over the tokens an hour generates, per million.
    data["cost_per_million"] = {str(c): round(data["price_per_hour"] / (t["median"] * 3600) * 1_000_000, 4)
                                for c, t in throughput.throughput(data).items()}


def _server(data: dict, trials: int) -> None:
    data["server"]["trials"] = data["server"]["trials"][:trials]


CUTS = {"batching": (_batching, batching.settled), "prompt-length-sweep": (_sweep, prompt_length_sweep.settled),
        "throughput": (_throughput, throughput.settled), "offline-vs-server": (_server, offline_vs_server.settled)}
STOPPED_BY = {"batching": concurrency_sweep.settled, "throughput": concurrency_sweep.settled}
TIMED = {"batching": ("throughput-rises", "itl-rises"),
         "prompt-length-sweep": ("ttft-grows", "prefill-grows", "prefill-linear", "itl-flat", "prompt-token-cheaper",
                                 "itl-matches-server"),
         "throughput": ("rises-with-concurrency", "cost-falls"),
         "offline-vs-server": ("throughput",)}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("job_id", sorted(CUTS))
def test_one_round_settles_nothing(job_id, profile):
    """One round of three cannot bound a median: every timed rule is inconclusive, and says why."""
    cut, _ = CUTS[job_id]
    data = record(job_id, profile)
    cut(data, 1)
    for claim in TIMED[job_id]:
        v = decide(job_id, claim, data)
        assert v["verdict"] == "inconclusive", (claim, v)
        assert "of up to 3" in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("job_id", sorted(CUTS))
def test_two_rounds_settle_or_stay_open(job_id, profile):
    """Two rounds: where settled() says the third could not change a verdict, the rules give the full
    record's verdicts; where it says it could, they are inconclusive."""
    cut, settled = CUTS[job_id]
    full = {c: decide(job_id, c, record(job_id, profile))["verdict"] for c in TIMED[job_id]}
    data = record(job_id, profile)
    cut(data, 2)
    stop = settled(data)
    for claim in TIMED[job_id]:
        got = decide(job_id, claim, data)["verdict"]
        assert got == (full[claim] if stop["settled"] else "inconclusive"), (claim, stop)


def _rounds(job_id: str, data: dict) -> int:
    """The rounds (or server trials) a record holds."""
    if job_id == "batching":
        return min(sum(1 for r in data["runs"] if r["concurrency"] == n) for n in batching.CONCURRENCY)
    if job_id == "prompt-length-sweep":
        return min(sum(1 for r in data["runs"] if r["sentences"] == n) for n in prompt_length_sweep.SENTENCES)
    if job_id == "throughput":
        return concurrency_sweep.rounds(data)
    return len(data["server"]["trials"])


def _stopped(job_id: str, data: dict) -> dict | None:
    """The stopping report collect() wrote into the record (None in a record from before the early stop)."""
    return (data["server"] if job_id == "offline-vs-server" else data).get("stopped")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("job_id", sorted(CUTS))
def test_committed_records_settle_where_they_stopped(job_id, profile):
    """However many rounds a committed record holds (fewer than three when the rest could not change a
    verdict): settled() settles it there, with the report collect() recorded, and no fewer of its rounds did
    (else collect() would have stopped sooner); the rules give the verdicts committed with it."""
    cut, settled = CUTS[job_id]
    data = record(job_id, profile)
    n, stop = _rounds(job_id, data), settled(data)
    assert 1 <= n <= 3 and stop["settled"], stop
    # The concurrency sweep stops on the stopping rules of both jobs that read it.
    stopping = STOPPED_BY.get(job_id, settled)
    if _stopped(job_id, data) is not None:
        assert _stopped(job_id, data) == stopping(data)
        for k in range(1, n):
            fewer = record(job_id, profile)
            cut(fewer, k)
            assert not stopping(fewer)["settled"], (k, stopping(fewer))
    committed = store.load(job_id, profile)["claims"]
    for claim in TIMED[job_id]:
        v = decide(job_id, claim, data)
        assert v["verdict"] == committed[f"{job_id}.{claim}"]["verdict"], (claim, v)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("job_id", sorted(CUTS))
def test_full_records_are_settled(job_id, profile):
    """Every round run: nothing is left to change, whatever the bounds say."""
    _, settled = CUTS[job_id]
    assert settled(record(job_id, profile))["settled"]


def test_throughput_unsettled_when_a_third_round_could_flip_it():
    """Two rounds whose 4-at-once throughputs straddle 1.2x the 2-at-once range: a third could put the
    median of 4 at once on either side, so neither rule about rises can be decided."""
    data = record("throughput")
    _throughput(data, 2)
    levels = rounds_of(data)
    for r in levels:
        retime(r[2], throughput.RISE_FACTOR * rate(r[1]))  # exactly at the threshold...
    retime(levels[0][2], 2 * rate(levels[0][2]))  # ...one round far above it, the other at it
    _costs(data)
    assert not throughput.settled(data)["settled"]
    assert decide("throughput", "rises-with-concurrency", data)["verdict"] == "inconclusive"


def test_throughput_refuted_early_when_no_round_could_save_it():
    """Two rounds where 8 at once is no faster than 4: no third round can lift the median 1.2x above."""
    data = record("throughput")
    _throughput(data, 2)
    slowest_at_4 = min(rate(r[2]) for r in rounds_of(data))
    for r in rounds_of(data):
        retime(r[3], slowest_at_4)
    _costs(data)
    assert throughput.settled(data)["settled"]
    assert decide("throughput", "rises-with-concurrency", data)["verdict"] == "refuted"


def test_offline_vs_server_refuted_early():
    """Two server trials twice as fast as every offline one: a third cannot bring the server's median
    within the tolerance, so the throughput claim is refuted without it."""
    data = record("offline-vs-server")
    _server(data, 2)
    slowest = max(t["seconds"] for t in data["offline"]["trials"])
    for t in data["server"]["trials"]:
        t["seconds"] = slowest / 2
    assert offline_vs_server.settled(data)["settled"]
    assert decide("offline-vs-server", "throughput", data)["verdict"] == "refuted"


def test_sweep_itl_open_while_a_third_trial_could_break_flatness():
    """Two trials whose longest-prompt ITL differ widely (one 40 % above the shortest's): the third
    decides which side the median lands, so the sweep is inconclusive."""
    data = record("prompt-length-sweep", "cpu-oldest")
    _sweep(data, 2)
    longest = [r for r in data["runs"] if r["sentences"] == prompt_length_sweep.SENTENCES[-1]]
    longest[0]["itl"] *= 1.4
    longest[0]["server"]["inter_token_latency_seconds_sum"] *= 1.4
    assert not prompt_length_sweep.settled(data)["settled"]
    assert "inconclusive" in every_verdict("prompt-length-sweep", data)
    assert decide("prompt-length-sweep", "itl-flat", data)["verdict"] == "inconclusive"


def _slow_top_concurrency(data: dict, factor: float) -> None:
    """The top concurrency's requests with every gap after their first chunk `factor` times as long."""
    for run in data["runs"]:
        if run["concurrency"] == batching.CONCURRENCY[-1]:
            for r in run["requests"]:
                t0 = next(x["t"] for x in r["lines"] if x["line"].startswith("data: {"))
                for x in r["lines"]:
                    x["t"] = t0 + (x["t"] - t0) * factor if x["t"] >= t0 else x["t"]


def _itl_rise_range(data: dict) -> tuple[float, float]:
    """The least and greatest ITL rise (top concurrency against one alone) the medians of three rounds could
    still reach, as settled() bounds them."""
    from verify.measure.trials import median_range
    (_, i1), (_, i_n) = batching._per_run(data, batching.CONCURRENCY[0]), batching._per_run(data, batching.CONCURRENCY[-1])
    (a_lo, a_hi) = median_range(i1, batching.ROUNDS * batching.CONCURRENCY[0])
    (t_lo, t_hi) = median_range(i_n, batching.ROUNDS * batching.CONCURRENCY[-1])
    return t_lo / a_hi - 1, t_hi / a_lo - 1


def test_batching_settles_on_a_clear_rise():
    """Two rounds whose ITL rise is open: the top concurrency's requests sped up until the range of the rise
    a third round could still give straddles +10 % (its two ends' ratios to 1.10 equal and opposite). With those
    requests slowed again until the least rise is 2 % clear of +10 %, it is a rise whatever a third round
    measures. (The record's own rounds settle it on both profiles, so the open case is made by the edit.)"""
    data = record("batching")
    _batching(data, 2)
    lo, hi = _itl_rise_range(data)
    assert lo < hi  # the rounds' ITLs spread: there is a range to straddle the threshold with
    _slow_top_concurrency(data, (1 + batching.ITL_RISE) / ((1 + lo) * (1 + hi)) ** 0.5)
    lo, hi = _itl_rise_range(data)
    assert lo < batching.ITL_RISE < hi
    stop = batching.settled(data)
    assert not stop["settled"] and "itl: open" in stop["why"] and "throughput: holds" in stop["why"], stop
    assert decide("batching", "itl-rises", data)["verdict"] == "inconclusive"
    _slow_top_concurrency(data, (1 + batching.ITL_RISE) * 1.02 / (1 + lo))
    assert _itl_rise_range(data)[0] > batching.ITL_RISE
    assert batching.settled(data)["settled"]
    assert decide("batching", "itl-rises", data)["verdict"] == "confirmed"
