"""api-server-cpu: the paired rounds stop once the rest could not move the median ratio across its threshold.

Replays the committed records (captured from a live vLLM server), cut back to fewer rounds or edited.
"""

from __future__ import annotations

import copy

import pytest

from tests.rules._records import PROFILES, decide, record
from verify.jobs.streaming import api_server_cpu as job

CLAIM = "streaming-costs-more"


def _rounds(d: dict, n: int) -> dict:
    d["batches"] = [b for b in d["batches"] if b["round"] < n]
    return d


def _scale_api_cpu(batch: dict, factor: float) -> None:
    """Scale the API server's CPU used in a recorded batch (its process clock's reading after the batch)."""
    clock = batch["api_clock"]
    clock["after_s"] = clock["before_s"] + (clock["after_s"] - clock["before_s"]) * factor


@pytest.mark.parametrize("profile", PROFILES)
def test_one_round_settles_nothing(profile):
    d = _rounds(record("api-server-cpu", profile), 1)
    assert not job.settled(d)["settled"]
    v = decide("api-server-cpu", CLAIM, d)
    assert v["verdict"] == "inconclusive" and "1 of up to 3 rounds" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_on_one_side_give_the_verdict_three_would(profile):
    d = record("api-server-cpu", profile)
    rounds = len({b["round"] for b in d["batches"]})
    if rounds < 2:
        pytest.skip("the record ran fewer than two rounds")
    assert decide("api-server-cpu", CLAIM, d)["verdict"] == "confirmed"
    two = _rounds(record("api-server-cpu", profile), 2)
    stop = job.settled(two)
    if "stopped" in d:  # written by collect(): it stopped after two rounds exactly when they settled it
        assert stop["settled"] == (rounds == 2), stop
    if stop["settled"]:
        assert stop["why"] == "concurrency 1: above; concurrency 8: above"
        assert decide("api-server-cpu", CLAIM, two)["verdict"] == "confirmed"
    else:
        assert decide("api-server-cpu", CLAIM, two)["verdict"] == "inconclusive"
    # Whatever the record's rounds: two rounds that agree (the second a deep copy of the recorded first's
    # batches) settle it, with the verdict a third such round would give.
    one = _rounds(record("api-server-cpu", profile), 1)
    first = [b for b in one["batches"] if b["round"] == 0]
    one["batches"] += [{**copy.deepcopy(b), "round": 1} for b in first]
    assert job.settled(one)["settled"]
    agreed = decide("api-server-cpu", CLAIM, one)["verdict"]
    one["batches"] += [{**copy.deepcopy(b), "round": 2} for b in first]
    assert agreed == decide("api-server-cpu", CLAIM, one)["verdict"] != "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_either_side_of_the_threshold_leave_it_open(profile):
    # The second round's streamed batch at concurrency 1 made as cheap as its pair: one ratio above 1.10,
    # one at 1.0, so a third round decides where the median falls.
    d = _rounds(record("api-server-cpu", profile), 2)
    n, s = job.batches_of(d, False, 1)[1], job.batches_of(d, True, 1)[1]
    ratio = job.cpu_per_token_ms(s)["api"] / job.cpu_per_token_ms(n)["api"]
    _scale_api_cpu(s, 1 / ratio)
    stop = job.settled(d)
    assert not stop["settled"] and "concurrency 1: open" in stop["why"]
    assert decide("api-server-cpu", CLAIM, d)["verdict"] == "inconclusive"
    # With all three rounds the median decides, whatever the rounds say.
    full = record("api-server-cpu", profile)
    assert job.settled(full)["settled"] or len({b["round"] for b in full["batches"]}) < job.ROUNDS


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_below_the_threshold_settle_a_refutation(profile):
    d = _rounds(record("api-server-cpu", profile), 2)
    for c in job.LEVELS:
        for n, s in zip(job.batches_of(d, False, c), job.batches_of(d, True, c)):
            _scale_api_cpu(s, job.cpu_per_token_ms(n)["api"] / job.cpu_per_token_ms(s)["api"])
    stop = job.settled(d)
    assert stop["settled"] and stop["why"] == "concurrency 1: not above; concurrency 8: not above"
    assert decide("api-server-cpu", CLAIM, d)["verdict"] == "refuted"

