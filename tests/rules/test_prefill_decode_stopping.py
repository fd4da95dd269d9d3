"""bench-agreement: the harness requests stop once the rest could not move either median across its tolerance.

Replays the committed records (captured from a live vLLM server), cut back to fewer harness requests or edited.
"""

from __future__ import annotations

import copy

import pytest

from tests.rules._records import PROFILES, decide, record
from verify.jobs.prefill_decode import bench_agreement as job

JOB = "bench-agreement"


def _cut(d: dict, n: int) -> dict:
    d["harness"] = d["harness"][:n]
    return d


def _set(d: dict, key: str, factors: list[float]) -> None:
    """The harness's first requests measure `key` at these multiples of the benchmark's median."""
    ref = d["bench"]["result"][f"median_{key}_ms"] / 1000
    for run, factor in zip(d["harness"], factors):
        run[key] = ref * factor


def _all_requests(d: dict) -> dict:
    """The record with all REQUESTS harness requests. A record that stopped early (the rest could not move
    either median) lacks the last ones: each missing request is a deep copy of a recorded one (real
    measurements, which the tests then set with _set)."""
    recorded = len(d["harness"])
    while len(d["harness"]) < job.REQUESTS:
        d["harness"].append(copy.deepcopy(d["harness"][len(d["harness"]) % recorded]))
    return d


@pytest.mark.parametrize("profile", PROFILES)
def test_the_records_settle_at_their_requests_with_the_same_verdicts(profile):
    full = record(JOB, profile)
    n = len(full["harness"])
    stop = job.settled(full)
    assert stop["settled"]
    if "stopped" in full:  # written by collect(): its report is the rule's
        assert full["stopped"] == stop
    for claim in ("ttft-agrees", "itl-agrees", "same-seed-is-cached"):
        assert decide(JOB, claim, full)["verdict"] == "confirmed"
    for k in (1, 2):  # the median of five is not bounded by fewer than three
        cut = _cut(record(JOB, profile), k)
        assert not job.settled(cut)["settled"]
        for claim in ("ttft-agrees", "itl-agrees"):
            v = decide(JOB, claim, cut)
            assert v["verdict"] == "inconclusive" and f"{k} of up to {job.REQUESTS}" in v["because"], v
    # Cut back to any number of its requests from three on: inconclusive where they leave a median open,
    # else the full record's verdict (the requests cut could not have changed it).
    for k in range(3, n + 1):
        cut = _cut(record(JOB, profile), k)
        at_k = job.settled(cut)
        if "stopped" in full:  # collect() would have stopped at k had k requests settled both medians
            assert at_k["settled"] == (k == n), (k, at_k)
        for claim, key in (("ttft-agrees", "TTFT"), ("itl-agrees", "ITL")):
            v = decide(JOB, claim, cut)
            if f"{key}: open" in at_k["why"] and k < job.REQUESTS:
                assert v["verdict"] == "inconclusive" and f"{k} of up to {job.REQUESTS}" in v["because"], v
                continue
            assert v["verdict"] == "confirmed", (k, v)
            assert (f"{k} of up to 5 harness requests" in v["because"]) == (k < job.REQUESTS), v
        assert decide(JOB, "same-seed-is-cached", cut)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_three_requests_at_the_benchmarks_figures_settle_a_confirmation(profile):
    # Three requests that measure the benchmark's own medians: two more could move neither median.
    d = _cut(record(JOB, profile), 3)
    _set(d, "ttft", [1.0, 1.0, 1.0])
    _set(d, "itl", [1.0, 1.0, 1.0])
    assert job.settled(d) == {"requests": 3, "max_requests": job.REQUESTS, "settled": True,
                              "why": "TTFT: agrees; ITL: agrees"}
    for claim in ("ttft-agrees", "itl-agrees"):
        v = decide(JOB, claim, d)
        assert v["verdict"] == "confirmed" and "3 of up to 5 harness requests" in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
def test_three_requests_far_apart_settle_a_refutation(profile):
    d = _all_requests(record(JOB, profile))
    _set(d, "ttft", [1.5, 1.6, 1.7, 1.0, 1.0])  # the last two could not bring the median back
    cut = _cut(d, 3)
    assert job.settled(cut)["why"].startswith("TTFT: apart")
    assert decide(JOB, "ttft-agrees", cut)["verdict"] == "refuted"
    assert decide(JOB, "ttft-agrees", d)["verdict"] == "refuted"


@pytest.mark.parametrize("profile", PROFILES)
def test_requests_either_side_of_the_tolerance_leave_it_open_until_all_ran(profile):
    d = _all_requests(record(JOB, profile))
    _set(d, "itl", [1.0, 1.3, 0.95, 1.02, 1.01])  # one request outside: two more could still tip the median
    cut = _cut(_all_requests(record(JOB, profile)), 3)
    _set(cut, "itl", [1.0, 1.3, 0.95])
    assert not job.settled(cut)["settled"]
    assert decide(JOB, "itl-agrees", cut)["verdict"] == "inconclusive"
    # Four of them: the median of five lies between the second and third smallest, both within 15 %.
    cut = _cut(_all_requests(record(JOB, profile)), 4)
    _set(cut, "itl", [1.0, 1.3, 0.95, 1.02])
    assert decide(JOB, "itl-agrees", cut)["verdict"] == "confirmed"
    # All five ran: decided whatever the spread.
    assert job.settled(d)["settled"] and decide(JOB, "itl-agrees", d)["verdict"] == "confirmed"
    _set(d, "itl", [1.3, 1.3, 1.3, 1.0, 1.0])
    assert decide(JOB, "itl-agrees", d)["verdict"] == "refuted"
