"""prefix-hits: the timed rounds stop once the rest could not move the medians across the rule's threshold.

Replays the committed records (captured from a live vLLM server), cut back to fewer timed rounds or edited;
the job's collect() is run with its requests replayed from a record.
"""

from __future__ import annotations

import copy

import pytest

from tests.rules._records import PROFILES, decide, record
from tests.rules.flips_kv_cache import hit_recomputes_prefill
from verify.jobs.kv_cache import prefix_hits as job

JOB = "prefix-hits"
CLAIM = "hit-skips-prefill"


def _cut(d: dict, rounds: int) -> dict:
    d["timed"] = d["timed"][:rounds]
    return d


def _warm_as_cold(d: dict, i: int) -> dict:
    """Round i's warm request as slow as its cold one: a round that saved nothing."""
    d["timed"][i]["warm"]["ttft_s"] = d["timed"][i]["cold"]["ttft_s"]
    return d


def _three_rounds(d: dict) -> dict:
    """The record with all TIMED_ROUNDS timed rounds. A record that stopped early (the rest could not change
    the verdict) lacks the last: each missing round is a deep copy of the first recorded one (a real cold and
    warm pair, to be edited by the test), so a test can say what a third round would have decided."""
    while len(d["timed"]) < job.TIMED_ROUNDS:
        d["timed"].append(copy.deepcopy(d["timed"][0]))
    return d


@pytest.mark.parametrize("profile", PROFILES)
def test_the_records_settle_at_their_rounds_with_the_same_verdict(profile):
    d = record(JOB, profile)
    n = len(d["timed"])
    full = decide(JOB, CLAIM, d)
    stop = job.timed_settled(d)
    assert stop["settled"] and full["verdict"] == "confirmed", (stop, full)
    if n < job.TIMED_ROUNDS:
        assert f", {n} rounds of up to 3 (the rest could not change the verdict): TTFT" in full["because"]
    else:
        assert ", 3 rounds: TTFT" in full["because"]
    if "stopped" in d:  # written by collect(): its report is the rule's, and it stopped at the first settled round
        assert d["stopped"] == stop
    one = decide(JOB, CLAIM, _cut(record(JOB, profile), 1))
    assert one["verdict"] == "inconclusive" and "1 of up to 3 timed rounds" in one["because"], one
    # Cut back to any number of its rounds: inconclusive where they leave the medians open, else the full
    # record's verdict (the rounds cut could not have changed it).
    for k in range(2, n + 1):
        cut = _cut(record(JOB, profile), k)
        at_k, v = job.timed_settled(cut), decide(JOB, CLAIM, cut)
        if "stopped" in d:  # collect() would have stopped at k had k rounds settled it
            assert at_k["settled"] == (k == n), (k, at_k)
        if not at_k["settled"]:
            assert v["verdict"] == "inconclusive" and f"{k} of up to 3 timed rounds" in v["because"], v
            continue
        assert v["verdict"] == "confirmed", (k, v)
        if k < job.TIMED_ROUNDS:
            assert at_k["why"].startswith("warm median below 50% of cold")
            assert f"{k} rounds of up to 3 (the rest could not change the verdict)" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_that_agree_settle_a_confirmation(profile):
    # The second round a deep copy of the recorded first: both medians are fixed whatever a third measures.
    d = _cut(record(JOB, profile), 1)
    d["timed"].append(copy.deepcopy(d["timed"][0]))
    stop = job.timed_settled(d)
    assert stop["settled"] and stop["why"].startswith("warm median below 50% of cold"), stop
    v = decide(JOB, CLAIM, d)
    assert v["verdict"] == "confirmed" and "2 rounds of up to 3 (the rest could not change the verdict)" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_settle_a_refutation(profile):
    d = record(JOB, profile)
    hit_recomputes_prefill(d)
    assert decide(JOB, CLAIM, d)["verdict"] == "refuted"
    assert decide(JOB, CLAIM, _cut(copy.deepcopy(d), 2))["verdict"] == "refuted"
    assert job.timed_settled(_cut(d, 2))["why"].startswith("warm median not below 50% of cold")


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_that_disagree_leave_it_to_the_third(profile):
    d = _warm_as_cold(_three_rounds(record(JOB, profile)), 1)
    stop = job.timed_settled(_cut(copy.deepcopy(d), 2))
    assert stop == {"rounds": 2, "max_rounds": 3, "settled": False, "why": "open"}
    v = decide(JOB, CLAIM, _cut(copy.deepcopy(d), 2))
    assert v["verdict"] == "inconclusive" and "2 of up to 3 timed rounds" in v["because"]
    # The third round, a hit (as recorded, or a copy of the recorded first), decides: the warm median is the hits'.
    assert decide(JOB, CLAIM, d)["verdict"] == "confirmed"
    # Had it saved nothing either, the warm median would be a cold time.
    assert decide(JOB, CLAIM, _warm_as_cold(d, 2))["verdict"] == "refuted"


def test_a_record_without_text_stays_inconclusive_however_many_rounds():
    d = _cut(record(JOB), 1)
    d["timed"][0]["warm"]["ttft_s"] = None
    assert job.timed_settled(d)["settled"]
    assert decide(JOB, CLAIM, d)["verdict"] == "inconclusive"


class _Server:
    url = "http://replay"


class _Ctx:
    server = _Server()
    base_url = "http://replay/v1"


def _replay(monkeypatch, d: dict) -> list[dict]:
    """collect() with its requests answered from the record d, in the order collect() sends them."""
    from verify.measure import metrics, prompts
    answers = [copy.deepcopy(x[k]) for x in d["lengths"].values() for k in ("cold", "between", "warm")]
    answers += [copy.deepcopy(t[k]) for t in d["timed"] for k in ("cold", "warm")]
    sent: list[dict] = []

    def one(ctx, client, prompt, salt, max_tokens=job.MAX_TOKENS):
        sent.append(answers.pop(0))
        return sent[-1]
    monkeypatch.setattr(job, "_one", one)
    monkeypatch.setattr(prompts, "exact_prompt", lambda url, client, n, model="chat": f"<{n} tokens>")
    monkeypatch.setattr(metrics, "read_all", lambda url, client=None: {
        f'vllm:cache_config_info{{block_size="{d["block_size"]}"}}': 1.0})
    return sent


@pytest.mark.parametrize("profile", PROFILES)
def test_collect_stops_after_the_rounds_that_settle(monkeypatch, profile):
    d = record(JOB, profile)
    # The first number of the record's rounds that settles the medians (every round, had none settled early).
    first = next(k for k in range(2, len(d["timed"]) + 1) if job.timed_settled(_cut(copy.deepcopy(d), k))["settled"])
    if "stopped" in d:  # written by collect(): it stopped there
        assert first == len(d["timed"])
    sent = _replay(monkeypatch, d)
    got = job.collect(_Ctx())
    assert len(got["timed"]) == first and len(sent) == 3 * len(job.LENGTHS) + 2 * first
    assert got["stopped"] == job.timed_settled(_cut(copy.deepcopy(d), first)) and got["stopped"]["settled"]
    assert got["timed"] == d["timed"][:first]
    assert got["lengths"] == d["lengths"]
    assert decide(JOB, CLAIM, got)["verdict"] == "confirmed"
    assert {k: decide(JOB, c, got)["verdict"] for k, c in [(0, "first-is-cold"), (1, "whole-blocks-only"),
                                                          (2, "finished-still-hits"), (3, "greedy-unchanged")]} \
        == {0: "confirmed", 1: "confirmed", 2: "confirmed", 3: "confirmed"}


def test_collect_runs_the_third_round_while_the_medians_are_open(monkeypatch):
    d = _warm_as_cold(_three_rounds(record(JOB)), 1)
    _replay(monkeypatch, d)
    got = job.collect(_Ctx())
    assert len(got["timed"]) == 3 and got["stopped"]["rounds"] == 3
    assert decide(JOB, CLAIM, got)["verdict"] == "confirmed"
