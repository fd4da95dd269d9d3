"""The concurrency sweep (verify/jobs/prefill_decode/_sweep.py) is measured once per server start for both jobs
that read it (batching and throughput), and stops on the stopping rules of both.

The snippet's requests are answered from a committed batching record, captured from a live vLLM server, run by
run in the order the sweep sends them.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from tests.rules._records import PROFILES, record
from verify.jobs.cost import throughput
from verify.jobs.prefill_decode import _sweep, batching


class _Ctx:
    """What the sweep uses of a run's context: the snippets it declares, the server, the dict of its start."""

    def __init__(self, snippet, shared: dict):
        self._snippet, self.shared, self.declared = snippet, shared, []
        self.server = SimpleNamespace(url="http://127.0.0.1:1")
        self.base_url = self.server.url + "/v1"

    def snippet(self, relative: str):
        self.declared.append(relative)
        if relative == _sweep.SNIPPET:
            return self._snippet
        from snippets.cost import cost_per_million
        return cost_per_million


def _replaying(d: dict, sent: list[int]):
    """A send_together that answers each call with the record's next run, which must be of the level asked."""
    runs = iter(copy.deepcopy(d["runs"]))

    def send_together(base_url, n, max_tokens):
        run = next(runs)
        assert (run["concurrency"], max_tokens) == (n, _sweep.MAX_TOKENS)
        sent.append(n)
        return [{"status": r["status"], "lines": r["lines"]} for r in run["requests"]]
    return SimpleNamespace(send_together=send_together)


@pytest.fixture(autouse=True)
def _no_waiting(monkeypatch):
    from verify.measure import metrics
    monkeypatch.setattr(metrics, "wait_idle", lambda url, timeout_s=120.0: None)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_second_reader_gets_the_first_readers_sweep_and_sends_nothing(profile):
    d = record("batching", profile)
    sent: list[int] = []
    shared: dict = {}
    first_ctx = _Ctx(_replaying(d, sent), shared)
    first = batching.collect(first_ctx)
    # Every level of every round the record holds, and no more: the sweep stopped where both jobs were settled.
    assert sent == list(_sweep.CONCURRENCY) * _sweep.rounds(d)
    assert first["stopped"] == _sweep.settled(first) and first["stopped"]["settled"]
    assert [r["lines"] for run in first["runs"] for r in run["requests"]] == \
        [r["lines"] for run in d["runs"] for r in run["requests"]]
    second_ctx = _Ctx(_replaying(d, sent), shared)  # the same server start
    second = throughput.collect(second_ctx)
    assert len(sent) == len(_sweep.CONCURRENCY) * _sweep.rounds(d), "the second reader sent requests"
    assert {k: v for k, v in second.items() if k not in ("price_per_hour", "cost_per_million")} == first
    assert second["measured_by"] == "batching"
    # Each record names the snippet its data came from.
    assert _sweep.SNIPPET in first_ctx.declared and _sweep.SNIPPET in second_ctx.declared
    assert "cost/cost_per_million.py" in second_ctx.declared


def test_another_server_start_measures_the_sweep_again():
    d = record("batching")
    sent: list[int] = []
    batching.collect(_Ctx(_replaying(d, sent), {}))
    throughput.collect(_Ctx(_replaying(d, sent), {}))
    assert sent == list(_sweep.CONCURRENCY) * _sweep.rounds(d) * 2


def test_the_sweep_runs_on_while_one_reader_is_open():
    """A record whose rounds settle batching but leave throughput open would not have stopped: the sweep's
    stopping report is open while either job's is."""
    d = record("batching")
    d["runs"] = d["runs"][:2 * len(_sweep.CONCURRENCY)]
    top = [run for run in d["runs"] if run["concurrency"] == _sweep.CONCURRENCY[-1]]
    # 8 at once exactly twice one alone in one round, far above it in the other: "cost falls" stays open.
    from tests.rules._sweep_edits import rate, retime, rounds_of
    one = [r[0] for r in rounds_of(d)]
    retime(top[0], 2 * max(rate(r) for r in one))
    retime(top[1], 4 * max(rate(r) for r in one))
    assert batching.settled(d)["settled"] and not throughput.settled(d)["settled"]
    assert not _sweep.settled(d)["settled"]
