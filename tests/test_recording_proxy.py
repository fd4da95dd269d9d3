"""The recording proxy between a client and the live server: what passes is what was recorded.

A benchmark tool's figures are checked against the proxy's record of the same requests, so the
record must be exactly what the client received, timed no later than the client saw it, and a
client that leaves must still abort the request on the server.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest

from verify.live.recording_proxy import recording_proxy

pytestmark = pytest.mark.live
BODY = {"model": "chat", "messages": [{"role": "user", "content": "Name three rivers."}], "max_tokens": 24,
        "stream": True, "stream_options": {"include_usage": True}}


def test_a_stream_through_the_proxy_is_recorded_as_received(live_server):
    with recording_proxy(live_server.url) as proxy:
        received = []
        with httpx.stream("POST", proxy.api + "/chat/completions", json=BODY, timeout=120) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                if line:
                    received.append((time.perf_counter(), line))
        [exchange] = proxy.exchanges
    assert exchange["request"] == BODY and exchange["status"] == 200 and not exchange["client_gone"]
    assert [x["line"] for x in exchange["lines"]] == [line for _, line in received]
    assert received[-1][1] == "data: [DONE]"
    # One clock for both processes' times: each line reached the proxy before the client read it.
    assert all(rec["t"] <= t for rec, (t, _) in zip(exchange["lines"], received))
    times = [x["t"] for x in exchange["lines"]]
    assert exchange["t_received"] <= exchange["t_headers"] <= times[0] and times == sorted(times)
    usage = json.loads(exchange["lines"][-2]["line"].removeprefix("data: "))["usage"]
    assert usage["completion_tokens"] > 0


def test_a_client_that_leaves_the_proxy_aborts_the_request(live_server):
    from verify.measure import metrics
    body = {**BODY, "max_tokens": 1000, "ignore_eos": True}  # only the client's leaving can end it early
    metrics.wait_idle(live_server.url)
    before = metrics.read(live_server.url)
    with recording_proxy(live_server.url) as proxy:
        with httpx.stream("POST", proxy.api + "/chat/completions", json=body, timeout=120) as r:
            for i, _ in enumerate(r.iter_lines()):
                if i > 20:
                    break
        stopped = metrics.watch_until(live_server.url, lambda m: m["vllm:num_requests_running"] == 0, timeout_s=120)
        [exchange] = proxy.exchanges
    assert stopped["reached"] and exchange["client_gone"]
    after = metrics.read(live_server.url)
    generated = after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
    assert after["vllm:request_success_total"] == before["vllm:request_success_total"], \
        f"the request ran to its end ({generated:.0f} tokens generated)"
    assert 0 < generated < 1000


def test_a_server_that_is_down_is_a_502_with_its_reason():
    with recording_proxy("http://127.0.0.1:9") as proxy:  # the discard port: nothing listens on loopback
        r = httpx.post(proxy.api + "/chat/completions", json=BODY, timeout=30)
        [exchange] = proxy.exchanges
    assert r.status_code == 502 and "upstream" in r.text
    assert exchange["status"] is None and exchange["error"].startswith("upstream:")
