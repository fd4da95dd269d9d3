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


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_settle_the_records_with_the_same_verdict(profile):
    full = decide(JOB, CLAIM, record(JOB, profile))
    assert full["verdict"] == "confirmed" and ", 3 rounds: TTFT" in full["because"]
    one = decide(JOB, CLAIM, _cut(record(JOB, profile), 1))
    assert one["verdict"] == "inconclusive" and "1 of up to 3 timed rounds" in one["because"], one
    two = decide(JOB, CLAIM, _cut(record(JOB, profile), 2))
    assert two["verdict"] == "confirmed", two
    assert "2 rounds of up to 3 (the rest could not change the verdict)" in two["because"]
    assert job.timed_settled(_cut(record(JOB, profile), 2))["why"].startswith("warm median below 50% of cold")


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_settle_a_refutation(profile):
    d = record(JOB, profile)
    hit_recomputes_prefill(d)
    assert decide(JOB, CLAIM, d)["verdict"] == "refuted"
    assert decide(JOB, CLAIM, _cut(copy.deepcopy(d), 2))["verdict"] == "refuted"
    assert job.timed_settled(_cut(d, 2))["why"].startswith("warm median not below 50% of cold")


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_that_disagree_leave_it_to_the_third(profile):
    d = _warm_as_cold(record(JOB, profile), 1)
    stop = job.timed_settled(_cut(copy.deepcopy(d), 2))
    assert stop == {"rounds": 2, "max_rounds": 3, "settled": False, "why": "open"}
    v = decide(JOB, CLAIM, _cut(copy.deepcopy(d), 2))
    assert v["verdict"] == "inconclusive" and "2 of up to 3 timed rounds" in v["because"]
    # The third round, a hit as recorded, decides: the warm median is the hits'.
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

    def one(ctx, client, prompt, salt):
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
    sent = _replay(monkeypatch, d)
    got = job.collect(_Ctx())
    assert len(got["timed"]) == 2 and len(sent) == 3 * len(job.LENGTHS) + 2 * 2
    assert got["stopped"]["settled"] and got["stopped"]["rounds"] == 2
    assert got["lengths"] == d["lengths"]
    assert decide(JOB, CLAIM, got)["verdict"] == "confirmed"
    assert {k: decide(JOB, c, got)["verdict"] for k, c in [(0, "first-is-cold"), (1, "whole-blocks-only"),
                                                          (2, "finished-still-hits"), (3, "greedy-unchanged")]} \
        == {0: "confirmed", 1: "confirmed", 2: "confirmed", 3: "confirmed"}


def test_collect_runs_the_third_round_while_the_medians_are_open(monkeypatch):
    d = _warm_as_cold(record(JOB), 1)
    _replay(monkeypatch, d)
    got = job.collect(_Ctx())
    assert len(got["timed"]) == 3 and got["stopped"]["rounds"] == 3
    assert decide(JOB, CLAIM, got)["verdict"] == "confirmed"
