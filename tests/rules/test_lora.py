"""LoRA article: its rules replay real records captured from a live vLLM server serving adapters, edited."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row
from tests.rules.flips_lora import waiting_label_names_the_queue

RUNTIME = "lora-runtime"
MAX_LORAS = "lora-max-loras"


# --- lora-metric: waiting-named reads only scrapes in which requests waited ----------------------------

def _newest(scrape: dict) -> dict:
    return max(scrape["samples"], key=lambda x: x["value"])


def another_adapter_named_while_nothing_waited(data: dict) -> None:
    """A waiting label naming another adapter in a scrape where nothing waited says nothing: still refuted
    (the old rule confirmed on any one such scrape)."""
    quiet = [s for s in data["during"] if s["waiting"] == 0 and s["samples"]
             and _newest(s)["labels"].get("running_lora_adapters")]
    assert quiet
    for s in quiet:
        newest = _newest(s)
        newest["labels"]["waiting_lora_adapters"] = "attn-a" if newest["labels"]["running_lora_adapters"] != "attn-a" \
            else "attn-b"


def no_scrape_caught_requests_waiting(data: dict) -> None:
    """No scrape caught requests waiting: inconclusive."""
    for s in data["during"]:
        s["waiting"] = 0.0


def only_one_waiting_scrape_names_the_queue(data: dict) -> None:
    """Only some waiting scrapes naming adapters that are not running: inconclusive."""
    first = next(s for s in data["during"] if s["waiting"] > 0 and s["samples"]
                 and _newest(s)["labels"].get("running_lora_adapters"))
    _newest(first)["labels"]["waiting_lora_adapters"] = "mlp-c,attn-b"


# --- lora-runtime ---------------------------------------------------------------------------------------

def client_error_about_something_else(data: dict) -> None:
    """A client error about something else is not the rank's refusal."""
    data["steps"]["load_rank_32"].update(status=400, body={"error": {"message": "Bad request"}},
                                         body_text='{"error": {"message": "Bad request"}}')


# Each a claim, an edit of its committed record (None: as recorded) and the verdict it must give, on the
# records of both CPU profiles.
BOUNDARIES = [
    row("lora-metric.waiting-named", None, "refuted"),
    row("lora-metric.waiting-named", another_adapter_named_while_nothing_waited, "refuted"),
    row("lora-metric.waiting-named", no_scrape_caught_requests_waiting, "inconclusive", contains="0 of"),
    # Every waiting scrape naming adapters that are not running: confirmed.
    row("lora-metric.waiting-named", waiting_label_names_the_queue, "confirmed"),
    row("lora-metric.waiting-named", only_one_waiting_scrape_names_the_queue, "inconclusive"),
    row("lora-runtime.rank-client-error", client_error_about_something_else, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("status, verdict", [(200, "inconclusive"), (201, "inconclusive"), (None, "inconclusive"),
                                             (400, "confirmed"), (422, "confirmed"), (500, "refuted"),
                                             (503, "inconclusive")])
def test_only_a_refusal_of_the_rank_says_what_kind_of_error_it_is(profile, status, verdict):
    # 503 is no refusal the job expects (only 4xx and the worker's 500): a failed capture, so inconclusive.
    data = record(RUNTIME, profile)
    data["steps"]["load_rank_32"]["status"] = status
    assert decide(RUNTIME, "rank-client-error", data)["verdict"] == verdict


# --- lora-max-loras ---------------------------------------------------------------------------------------

def _shift(sent: dict, by: float) -> None:
    for line in sent["stream"]["lines"]:
        line["t"] = round(line["t"] + by, 6)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_third_adapter_starts_once_both_of_the_pair_have_finished(profile):
    from verify.jobs.lora._together import span
    from verify.jobs.lora.lora_max_loras import AFTER_BOTH_S, third_waited_s
    data = record(MAX_LORAS, profile)
    assert decide(MAX_LORAS, "two-at-a-time", data)["verdict"] == "confirmed"
    waited = [third_waited_s(t["three_adapters"]) for t in data["trials"]]
    from verify.jobs.lora.lora_max_loras import TELLING_TRIALS
    assert all(w[1] >= 0 for w in waited)
    assert sum(w[0] - w[1] > 2 * AFTER_BOTH_S for w in waited) >= TELLING_TRIALS

    def third(trial):
        group = trial["three_adapters"]
        firsts = sorted(group, key=lambda s: span(s)[0])
        return firsts[-1]
    # Boundary: the third's first token just at AFTER_BOTH_S before the later end confirms; a little more
    # before (still long after the first of the pair finished) refutes "once both have finished".
    for before, verdict in ((AFTER_BOTH_S - 0.001, "confirmed"), (AFTER_BOTH_S + 0.01, "refuted")):
        edited = record(MAX_LORAS, profile)
        for t, w in zip(edited["trials"], waited):
            _shift(third(t), -(w[1] + before))
        assert [third_waited_s(t["three_adapters"]) is not None for t in edited["trials"]] == [True] * 3
        assert decide(MAX_LORAS, "two-at-a-time", edited)["verdict"] == verdict
    # Two of the three sent after the first had finished (a busy machine once sent them a second late): the
    # order of service then says nothing about slots.
    apart = record(MAX_LORAS, profile)
    for sent in apart["trials"][0]["three_adapters"][1:]:
        sent["started_s"] = round(sent["started_s"] + 10.0, 4)
    v = decide(MAX_LORAS, "two-at-a-time", apart)
    assert v["verdict"] == "inconclusive" and "not all sent before the first of them finished" in v["because"]
    # A pair that finished within twice the tolerance of each other cannot tell "after both" from "after one".
    # With too few trials whose pair finished apart, the verdict cannot be given.
    close = record(MAX_LORAS, profile)
    for t in close["trials"][:2]:
        pair = [s for s in t["three_adapters"] if s is not third(t)]
        early, late = sorted(pair, key=lambda s: span(s)[1])
        last_text = [x for x in early["stream"]["lines"] if x["line"].startswith("data: {") and
                     json.loads(x["line"][6:]).get("choices") and
                     json.loads(x["line"][6:])["choices"][0].get("delta", {}).get("content")][-1]
        last_text["t"] = round(span(late)[1] - early["started_s"] - AFTER_BOTH_S, 6)
    v = decide(MAX_LORAS, "two-at-a-time", close)
    assert v["verdict"] == "inconclusive" and "cannot be told" in v["because"]
