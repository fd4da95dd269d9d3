"""Metrics article: the shortened waits of ttft-quantiles and load-signals still give the rules what they need.

Replays the committed records (captured from a live vLLM server and Prometheus), edited; ttft-quantiles'
collect() is run against a stand-in Prometheus that answers from a record, its requests replayed.
"""

from __future__ import annotations

import contextlib
import copy
import time

import pytest

from tests.rules._records import PROFILES, decide, every_verdict, record
from verify.jobs.metrics import load_signals, ttft_quantiles

TTFT_Q = "ttft-quantiles"
LOAD = "load-signals"


# --- ttft-quantiles: the window's ends wait for a scrape of the idle server, not a fixed 3 s ----------------

class _Prometheus:
    """Answers the queries collect() makes from a record; the server is scraped every `every` seconds from its
    start, until never_after if set."""

    def __init__(self, d: dict, every: float = 0.3, never_after: float | None = None):
        self.d, self.every, self.start, self.never_after = d, every, time.time(), never_after
        self.scrapes_seen: list[float] = []
        self.stop_at_first_request = False  # no scrape from the first request on

    def targets_up(self) -> bool:
        return True

    def _last_scrape(self) -> float:
        now = time.time()
        if self.never_after is not None:
            now = min(now, self.never_after)
        return self.start + (now - self.start) // self.every * self.every

    def query(self, expr: str, at: float | None = None) -> list[dict]:
        if expr.startswith("max(timestamp("):
            self.scrapes_seen.append(self._last_scrape())
            return [{"metric": {}, "value": [time.time(), str(self.scrapes_seen[-1])]}]
        if expr.startswith("histogram_quantile("):
            q = expr.split("(", 2)[1].split(",")[0]
            return copy.deepcopy(self.d["prometheus"]["estimates"][q])
        return [{"metric": {"le": le}, "value": [at, str(n)]} for le, n in self.d["prometheus"]["buckets"].items()]


class _Server:
    url = "http://replay"


class _Ctx:
    server = _Server()
    base_url = "http://replay/v1"

    def snippet_path(self, name):
        return name


def _collect(monkeypatch, d: dict, prom: _Prometheus) -> dict:
    from verify.live import prometheus
    from verify.measure import metrics, prompts
    answers = [copy.deepcopy(r) for r in d["requests"]]
    sent_at: list[float] = []

    def ttft(ctx, client, prompt):
        sent_at.append(time.time())
        if prom.stop_at_first_request and prom.never_after is None:
            prom.never_after = sent_at[0]
        return answers.pop(0)

    @contextlib.contextmanager
    def managed(*args, **kwargs):
        yield prom
    monkeypatch.setattr(ttft_quantiles, "_ttft", ttft)
    # The record's own number of requests of each length: it replays as it was made.
    monkeypatch.setattr(ttft_quantiles, "ROUNDS", len(d["requests"]) // 2)
    monkeypatch.setattr(prometheus, "managed_prometheus", managed)
    monkeypatch.setattr(prompts, "exact_prompt", lambda url, client, n, model="chat": f"<{n} tokens>")
    monkeypatch.setattr(metrics, "wait_idle", lambda url, timeout_s=120.0: None)
    got = ttft_quantiles.collect(_Ctx())
    got["_sent_at"] = sent_at
    return got


@pytest.mark.parametrize("profile", PROFILES)
def test_the_window_opens_after_a_scrape_of_the_idle_server_and_closes_after_one_past_the_requests(
        monkeypatch, profile):
    d = record(TTFT_Q, profile)
    prom = _Prometheus(d)
    got = _collect(monkeypatch, d, prom)
    sent = got.pop("_sent_at")
    # The scrape the start waited for was taken before t_start, and before the first request went.
    before = next(s for s in prom.scrapes_seen if s < got["t_start"])
    assert before < got["t_start"] < sent[0]
    # The end: a scrape taken after the last request, before t_end.
    assert any(sent[-1] < s <= got["t_end"] for s in prom.scrapes_seen)
    # About a scrape interval each, where a fixed 3 s was slept.
    assert 0 < got["scrape_waits_s"]["before"] <= prom.every + 0.3
    assert 0 < got["scrape_waits_s"]["after"] <= prom.every + 0.3
    assert got["prometheus"]["error"] is None
    rec = {c: decide(TTFT_Q, c, d)["verdict"] for c in ("exact", "linear-in-bucket", "within-a-bucket")}
    assert {c: decide(TTFT_Q, c, got)["verdict"] for c in rec} == rec == {
        "exact": "refuted", "linear-in-bucket": "confirmed", "within-a-bucket": "confirmed"}


def test_no_scrape_after_the_last_request_fails_the_capture(monkeypatch):
    d = record(TTFT_Q)
    monkeypatch.setattr(ttft_quantiles, "SCRAPE_WAIT_S", 0.5)
    # Scrapes stop once the requests begin: the window's end never sees them.
    prom = _Prometheus(d, every=0.1)
    prom.stop_at_first_request = True
    got = _collect(monkeypatch, d, prom)
    got.pop("_sent_at")
    assert got["prometheus"]["error"] == "Prometheus took no scrape within 0.5 s after the last request"
    assert every_verdict(TTFT_Q, got) == {"inconclusive"}


def test_no_scrape_of_the_idle_server_fails_the_capture(monkeypatch):
    d = record(TTFT_Q)
    monkeypatch.setattr(ttft_quantiles, "SCRAPE_WAIT_S", 0.3)
    prom = _Prometheus(d)
    prom.never_after = prom.start - 1
    got = _collect(monkeypatch, d, prom)
    got.pop("_sent_at")
    assert got["prometheus"]["error"].startswith("Prometheus took no scrape of the idle server within 0.3 s")
    assert every_verdict(TTFT_Q, got) == {"inconclusive"}


# --- load-signals: a 5 s rest, and the reads at rest it needs ----------------------------------------------

def _rest_polls(d: dict) -> list[dict]:
    return [p for p in d["alerts"]["polls"] if p["t"] < d["steps"][0]["start_s"]]


def _rest_of(d: dict, seconds: float) -> dict:
    """The record as a rest of `seconds` would have left it: the reads at rest after that dropped."""
    start = d["steps"][0]["start_s"]
    d["alerts"]["polls"] = [p for p in d["alerts"]["polls"] if p["t"] < seconds or p["t"] >= start]
    return d


def test_the_rest_leaves_enough_reads_at_one_a_second():
    # poll_alerts_until reads at t = 0 and then once a scrape interval until REST_S: about REST_S / SCRAPE_S reads.
    assert load_signals.REST_S / load_signals.SCRAPE_S >= load_signals.MIN_REST_READS + 1
    # No rest shorter than the rule's `for:` shows the alert firing: only "pending" can, at one evaluation.
    assert load_signals.REST_S < load_signals.ALERT_FOR_S


@pytest.mark.parametrize("profile", PROFILES)
def test_the_rest_decides_on_every_read_it_holds(profile):
    d = record(LOAD, profile)
    n = len(_rest_polls(d))
    assert n >= load_signals.MIN_REST_READS
    full = decide(LOAD, "alert-silent-at-rest", d)
    assert full["verdict"] == "confirmed" and full["because"].startswith(f"{n} reads")
    short = _rest_of(record(LOAD, profile), 3.0)
    assert len(_rest_polls(short)) == 3
    v = decide(LOAD, "alert-silent-at-rest", short)
    assert v["verdict"] == "confirmed" and v["because"].startswith("3 reads")


@pytest.mark.parametrize("profile", PROFILES)
def test_too_few_reads_at_rest_are_inconclusive(profile):
    d = _rest_of(record(LOAD, profile), 2.0)
    assert len(_rest_polls(d)) == load_signals.MIN_REST_READS - 1
    v = decide(LOAD, "alert-silent-at-rest", d)
    assert v["verdict"] == "inconclusive" and "read 2 times at rest, fewer than 3" in v["because"]
    d = _rest_of(record(LOAD, profile), 3.0)
    assert decide(LOAD, "alert-silent-at-rest", d)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_short_rest_still_catches_an_alert_pending_at_rest(profile):
    d = _rest_of(record(LOAD, profile), load_signals.REST_S)
    _rest_polls(d)[-1]["alerts"].append({"name": load_signals.ALERT, "state": "pending"})
    v = decide(LOAD, "alert-silent-at-rest", d)
    assert v["verdict"] == "refuted" and "pending" in v["because"]
