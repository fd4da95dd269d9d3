"""Metrics article: its rules replay real records captured from a live vLLM server and Prometheus, edited."""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row
from tests.rules.flips_metrics import first_tokens_at_the_estimates
from verify.jobs.metrics import load_signals, ttft_quantiles

TTFT_Q = "ttft-quantiles"
LOAD = "load-signals"


# --- load-signals: alert-resolves -------------------------------------------------------------------------

def _alert_polls(d: dict):
    return [(p, a) for p in d["alerts"]["polls"] for a in p["alerts"] if a["name"] == load_signals.ALERT]


def _last_listed(d: dict) -> int:
    """The index of the last poll that listed the alert."""
    return max(i for i, p in enumerate(d["alerts"]["polls"]) if any(a["name"] == load_signals.ALERT for a in p["alerts"]))


def alert_never_fired(data: dict) -> None:
    """An alert that never fired did not resolve: every poll lists it pending."""
    for _, alert in _alert_polls(data):
        alert["state"] = "pending"


def first_read_without_the_alert_at_the_bound(data: dict) -> None:
    """The first read without the alert at the bound after the drain confirms."""
    data["alerts"]["polls"][_last_listed(data) + 1]["t"] = data["drained_s"] + load_signals.RESOLVE_WITHIN_S


def first_read_without_the_alert_past_the_bound(data: dict) -> None:
    """Past the bound, refutes."""
    data["alerts"]["polls"][_last_listed(data) + 1]["t"] = data["drained_s"] + load_signals.RESOLVE_WITHIN_S + 0.1


def _drained_after_last_listed(data: dict, by: float) -> None:
    last = _last_listed(data)
    end = data["alerts"]["polls"][last]["t"] + by
    data["drained_s"] = end
    data["alerts"]["polls"][last + 1]["t"] = end  # the first read after the drain, as recorded


def last_listed_at_the_bound_before_the_drain(data: dict) -> None:
    """Last listed (firing) exactly the bound before the last request ended: confirmed."""
    _drained_after_last_listed(data, load_signals.RESOLVE_WITHIN_S)


def last_listed_past_the_bound_before_the_drain(data: dict) -> None:
    """Last listed (firing) more than the bound before the last request ended: gone long before, refuted."""
    _drained_after_last_listed(data, load_signals.RESOLVE_WITHIN_S + 0.1)


def alert_still_listed_at_the_last_read(data: dict) -> None:
    """Still listed at the last read: refuted."""
    for p in data["alerts"]["polls"][_last_listed(data) + 1:]:
        p["alerts"].append({"name": load_signals.ALERT, "state": "firing"})


def alert_last_listed_as_pending(data: dict) -> None:
    """Last listed as pending: it left pending, which resolves no firing alert."""
    polls = data["alerts"]["polls"]
    next(a for a in polls[_last_listed(data)]["alerts"] if a["name"] == load_signals.ALERT)["state"] = "pending"


# --- load-signals: ttft-moves-with-queue ----------------------------------------------------------------

def _slotted_window(d: dict) -> tuple[float, float]:
    """From the second level's start to the first level past --max-num-seqs: every client had a slot."""
    return d["steps"][1]["start_s"], load_signals._first_past_limit(d)["start_s"]


def _queued_peak(d: dict) -> float:
    past = load_signals._first_past_limit(d)["start_s"]
    return max(v for t, v in d["series"]["series"]["ttft_p95"] if past <= t <= d["load_end_s"] and v == v)


def _set_slotted(d: dict, value: float) -> None:
    lo, hi = _slotted_window(d)
    d["series"]["series"]["ttft_p95"] = [[t, value if lo <= t < hi and v == v else v]
                                         for t, v in d["series"]["series"]["ttft_p95"]]


def ttft_climbed_before_anything_waited(data: dict) -> None:
    """While every client had a slot the p95 already stood at the peak it reached once requests waited:
    the climb is not the queue's."""
    _set_slotted(data, _queued_peak(data))


def slotted_peak_at_half_the_queued(data: dict) -> None:
    """The slotted p95 exactly half the queued peak: not above twice it, so refuted at the boundary."""
    _set_slotted(data, _queued_peak(data) / 2)


def slotted_peak_just_under_half_the_queued(data: dict) -> None:
    _set_slotted(data, _queued_peak(data) / 2 * 0.999)


def no_ttft_while_slotted(data: dict) -> None:
    """The p95 was not read between the first level and the queue: the other side of the comparison is missing."""
    lo, hi = _slotted_window(data)
    data["series"]["series"]["ttft_p95"] = [[t, v] for t, v in data["series"]["series"]["ttft_p95"]
                                            if not lo <= t < hi]


# Each a claim, an edit of its committed record (None: as recorded) and the verdict it must give, on the
# records of both CPU profiles.
BOUNDARIES = [
    # Estimates at the exact percentiles confirm the exact claim.
    row("ttft-quantiles.exact", None, "refuted"),
    row("ttft-quantiles.exact", first_tokens_at_the_estimates, "confirmed"),
    row("load-signals.alert-resolves", None, "confirmed"),
    row("load-signals.alert-resolves", alert_never_fired, "inconclusive", contains="never fired"),
    row("load-signals.alert-resolves", first_read_without_the_alert_at_the_bound, "confirmed"),
    row("load-signals.alert-resolves", first_read_without_the_alert_past_the_bound, "refuted"),
    row("load-signals.alert-resolves", last_listed_at_the_bound_before_the_drain, "confirmed"),
    row("load-signals.alert-resolves", last_listed_past_the_bound_before_the_drain, "refuted"),
    row("load-signals.alert-resolves", alert_still_listed_at_the_last_read, "refuted"),
    row("load-signals.alert-resolves", alert_last_listed_as_pending, "inconclusive"),
    row("load-signals.ttft-moves-with-queue", None, "confirmed"),
    row("load-signals.ttft-moves-with-queue", ttft_climbed_before_anything_waited, "refuted"),
    row("load-signals.ttft-moves-with-queue", slotted_peak_at_half_the_queued, "refuted"),
    row("load-signals.ttft-moves-with-queue", slotted_peak_just_under_half_the_queued, "confirmed"),
    row("load-signals.ttft-moves-with-queue", no_ttft_while_slotted, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_resolution_is_bracketed_by_two_reads(profile):
    data = record(LOAD, profile)
    v = decide(LOAD, "alert-resolves", data)
    polls, last = data["alerts"]["polls"], _last_listed(data)
    gap = polls[last + 1]["t"] - polls[last]["t"]
    assert gap > 5 and f"the reads {gap:.1f} s apart there" in v["because"]  # no read while the requests drain


# --- ttft-quantiles ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("claim", ["exact", "within-a-bucket", "linear-in-bucket"])
def test_quantile_rules_need_the_window_to_count_exactly_the_requests_sent(profile, claim):
    data = record(TTFT_Q, profile)
    sent = len(data["requests"])
    assert data["prometheus"]["buckets"]["+Inf"] == sent == 2 * ttft_quantiles.ROUNDS
    assert decide(TTFT_Q, claim, data)["verdict"] != "inconclusive"
    # An empty window: every bucket 0 and NaN estimates (the old .exact rule read these as "refuted").
    for le in data["prometheus"]["buckets"]:
        data["prometheus"]["buckets"][le] = 0.0
    for q in data["prometheus"]["estimates"].values():
        q[0]["value"][1] = "NaN"
    v = decide(TTFT_Q, claim, data)
    assert v["verdict"] == "inconclusive" and f"counted 0 first tokens for {sent} requests" in v["because"]
    # One request too many in the window.
    data = record(TTFT_Q, profile)
    data["prometheus"]["buckets"]["+Inf"] += 1
    assert decide(TTFT_Q, claim, data)["verdict"] == "inconclusive"


# --- load-signals: kv-fraction: each reading a whole number of blocks over the usable blocks -------------

def _kv(d: dict) -> list[list[float]]:
    return d["series"]["series"]["kv_usage"]


def _fraction(d: dict, usable: int | None) -> str:
    kv = [v for _, v in _kv(d)]
    return (f"{len(kv)} readings from 0 to {max(kv):.4f}; " +
            (f"each is a whole number of blocks over {usable} (at most {round(max(kv) * usable)})" if usable else
             f"no reading is a whole number of blocks over {d['num_blocks']} or {d['num_blocks'] - 1}"))


def _busiest(d: dict) -> list[float]:
    return max(_kv(d), key=lambda p: p[1])


@pytest.mark.parametrize("profile", PROFILES)
def test_kv_usage_is_a_whole_number_of_blocks(profile):
    data = record(LOAD, profile)
    blocks = data["num_blocks"]
    # The engine keeps the null block aside: the readings are whole numbers of blocks over all but one.
    check(decide(LOAD, "kv-fraction", data), "confirmed", because=_fraction(data, blocks - 1))

    def edited(edit) -> tuple[dict, dict]:
        d = record(LOAD, profile)
        edit(d)
        return decide(LOAD, "kv-fraction", d), d

    # The pool one block smaller: the readings are over all of it, the first count tried.
    v, d = edited(lambda d: d.update(num_blocks=blocks - 1))
    check(v, "confirmed", because=_fraction(d, blocks - 1))
    # One block more: over neither that nor one less.
    v, d = edited(lambda d: d.update(num_blocks=blocks + 1))
    check(v, "refuted", because=_fraction(d, None))
    # One reading off a whole block by just under, and by just over, a thousandth of a block.
    v, d = edited(lambda d: _busiest(d).__setitem__(1, _busiest(d)[1] + 0.0009 / (blocks - 1)))
    check(v, "confirmed", because=_fraction(d, blocks - 1))
    v, d = edited(lambda d: _busiest(d).__setitem__(1, _busiest(d)[1] - 0.0011 / (blocks - 1)))
    check(v, "refuted", because=_fraction(d, None))
    # Every block in use at the busiest reading: still a fraction, 1 at most.
    v, d = edited(lambda d: _busiest(d).__setitem__(1, 1.0))
    check(v, "confirmed", because=_fraction(d, blocks - 1))
    # One block more than the pool: not a fraction.
    v, d = edited(lambda d: _busiest(d).__setitem__(1, blocks / (blocks - 1)))
    check(v, "refuted", because=_fraction(d, blocks - 1))
    # No block ever in use: the readings say nothing (they fit any count of blocks, the first tried).
    v, d = edited(lambda d: [p.__setitem__(1, 0.0) for p in _kv(d)])
    check(v, "refuted", because=_fraction(d, blocks))
