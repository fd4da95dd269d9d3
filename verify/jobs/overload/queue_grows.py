"""The default queue: no limit, so every request waits its turn; what that does to time to first token,
and what a client that stops waiting leaves behind.

Runs on the `max-num-seqs-1` variant (one request at a time). REQUESTS streams of MAX_TOKENS tokens
are sent at the same moment (the Lifecycle article's snippet, lifecycle/send_together.py); a moment
later one more request is sent whose client gives up after IMPATIENT_TIMEOUT_S, while it still waits.
"""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if

REQUESTS = 6
MAX_TOKENS = 16
IMPATIENT_AFTER_S = 0.3
IMPATIENT_TIMEOUT_S = 1.0
# The sizing arithmetic: position k (from 0) waits k answers; measured within this share of predicted.
ARITHMETIC_TOLERANCE = 0.25
# The request log's lines about a request's life (vllm/entrypoints/logger.py, vllm/v1/engine/async_llm.py).
REQUEST_LOG = re.compile(r"Received request|Added request|[Aa]bort|Finished request")


def collect(ctx) -> dict:
    import threading
    import time

    import httpx

    from verify.measure import capture, metrics
    snippet = ctx.snippet("lifecycle/send_together.py")
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    mark = ctx.server.log_size()
    impatient: dict = {}

    def give_up_soon():
        time.sleep(IMPATIENT_AFTER_S)
        body = {"model": "chat", "prompt": "Wait for me.", "max_tokens": MAX_TOKENS, "ignore_eos": True}
        try:
            r = httpx.post(ctx.base_url + "/completions", json=body, timeout=IMPATIENT_TIMEOUT_S)
            impatient.update(status=r.status_code, error=None)
        except httpx.TimeoutException as e:
            impatient.update(status=None, error=type(e).__name__)

    waiter = threading.Thread(target=give_up_soon, daemon=True)
    waiter.start()
    results = snippet.send_together(ctx.base_url, REQUESTS, MAX_TOKENS)
    waiter.join(30)
    metrics.wait_idle(ctx.server.url)
    time.sleep(0.5)  # counters move just after the request is done
    after = metrics.read_all(ctx.server.url)
    moved = metrics.delta(before, after, "vllm:")
    streams = [capture.results("sse", [x for x in r.get("lines", []) if x["line"].startswith("data: ")],
                               statuses=[r.get("status")], **r) for r in results]
    # What the other two places an operator looks at saw of the same seven requests: the API server's HTTP
    # counter (every handler and status) and the request log (--enable-log-requests: received, added,
    # aborted, finished).
    out = {"requests": streams, "impatient": impatient, "moved": moved,
           "http_moved": metrics.delta(before, after, "http_requests_total"), "managed": ctx.server.managed, "log": []}
    if ctx.server.managed:  # a server given by URL: its log is not readable here, and the log claim says so
        out["log_read"], lines = ctx.server.log_capture(mark)
        out["log"] = [line for line in lines if REQUEST_LOG.search(line)][:200]
    return out


def request_timings(d) -> list[dict]:
    """Per request, in the order served: first text and last event (s after sending) and text chunks."""
    import json
    out = []
    for r in d["requests"]:
        data = [x for x in r["lines"] if x["line"].startswith("data: ") and x["line"] != "data: [DONE]"]
        texts = [x for x in data if any((c.get("delta") or {}).get("content")
                                        for c in json.loads(x["line"][6:]).get("choices") or [])]
        out.append({"ttft": texts[0]["t"], "e2e": data[-1]["t"], "status": r["status"],
                    "finish": next((c.get("finish_reason") for x in data for c in json.loads(x["line"][6:]).get("choices") or []
                                    if c.get("finish_reason")), None)})
    return sorted(out, key=lambda t: t["ttft"])


def decide_none_refused(d):
    t = request_timings(d)
    return verdict_if(len(t) == REQUESTS and all(x["status"] == 200 and x["finish"] == "length" for x in t),
                      f"{REQUESTS} requests sent at once to --max-num-seqs 1: statuses "
                      f"{[x['status'] for x in t]}, finish reasons {[x['finish'] for x in t]}")


def decide_arithmetic(d):
    """TTFT at position k is k answers: predicted from the first request's own answer time."""
    t = request_timings(d)
    if len(t) != REQUESTS:  # all([]) would hold: every request of the burst must have been timed
        return verdict_if(None, f"{len(t)} of the {REQUESTS} streams were timed")
    one = t[0]["e2e"]  # the first request's whole answer: sent to its last event
    predicted = [k * one for k in range(len(t))]
    within = all(abs(x["ttft"] - p) <= ARITHMETIC_TOLERANCE * p for x, p in zip(t[1:], predicted[1:]))
    return verdict_if(within, f"one answer took {one:.2f} s; time to first token by position, measured against "
                              "k answers: " + ", ".join(f"{x['ttft']:.2f}/{p:.2f} s" for x, p in zip(t, predicted))
                      + f" (within {ARITHMETIC_TOLERANCE:.0%} required from position 1 on)")


def decide_impatient_unseen(d):
    """The request whose client gave up in the queue generated nothing, and /metrics counts only the others."""
    imp, moved = d["impatient"], d["moved"]
    if imp.get("error") != "ReadTimeout":
        return verdict_if(None, f"the impatient client did not time out while waiting ({imp})")
    finished = {k.split('"')[1]: v for k, v in moved.items() if k.startswith("vllm:request_success_total")}
    tokens = moved.get("vllm:generation_tokens_total", 0.0)
    latencies = moved.get("vllm:e2e_request_latency_seconds_count", 0.0)
    unseen = sum(finished.values()) == REQUESTS and latencies == REQUESTS and tokens == REQUESTS * MAX_TOKENS
    return verdict_if(unseen, f"{REQUESTS + 1} requests sent, one of them given up after {IMPATIENT_TIMEOUT_S:.0f} s "
                              f"in the queue: vllm:request_success_total rose by {finished or 0} (by finished "
                              f"reason), vllm:e2e_request_latency_seconds_count by {latencies:.0f}, "
                              f"vllm:generation_tokens_total by {tokens:.0f} ({REQUESTS} x {MAX_TOKENS})")


def _impatient_ids(d) -> list[str]:
    """The request ids the log received on /v1/completions (cmpl-...): the impatient request is the only one
    sent there; the burst goes to /v1/chat/completions (chatcmpl-...)."""
    return sorted({m.group(1) for line in d["log"] for m in [RECEIVED.search(line)] if m})


RECEIVED = re.compile(r"Received request (cmpl-[\w-]+)")


def decide_impatient_in_log(d):
    """The request log names the given-up request in an abort line (the id the engine gave it starts with the
    id the log received it under)."""
    if not d.get("managed"):
        return verdict_if(None, "the log of a server given by URL is not readable here")
    if d["impatient"].get("error") != "ReadTimeout":
        return verdict_if(None, f"the impatient client did not time out while waiting ({d['impatient']})")
    ids = _impatient_ids(d)
    if len(ids) != 1:
        return verdict_if(None, f"the log received {len(ids)} requests on /v1/completions ({ids}), not the one sent")
    aborts = [line.split("] ", 1)[-1] for line in d["log"] if ids[0] in line and re.search("[Aa]bort", line)]
    return verdict_if(bool(aborts), f"{len(d['log'])} request-log lines; about the request given up ({ids[0]}): "
                                    + ("; ".join(aborts) if aborts else "received and added, no abort line"))


def decide_impatient_http_2xx(d):
    """http_requests_total (the API server's HTTP counter) for /v1/completions, the impatient request's handler."""
    if d["impatient"].get("error") != "ReadTimeout":
        return verdict_if(None, f"the impatient client did not time out while waiting ({d['impatient']})")
    counted = {k.split('status="')[1].split('"')[0]: v for k, v in d["http_moved"].items()
               if 'handler="/v1/completions"' in k}
    chat = sum(v for k, v in d["http_moved"].items() if 'handler="/v1/chat/completions"' in k)
    if chat != REQUESTS:
        return verdict_if(None, f"the HTTP counter moved by {chat:.0f} for the burst's {REQUESTS} chat requests: "
                                f"it did not count the requests it served ({d['http_moved']})")
    return verdict_if(counted == {"2xx": 1.0}, f"the client gave up after {IMPATIENT_TIMEOUT_S:.0f} s with no answer "
                                               f"({d['impatient']['error']}); http_requests_total for /v1/completions "
                                               f"rose by {counted or 'nothing'} (by status); for the burst's chat "
                                               f"requests by {chat:.0f}")


JOB = Job(
    id="queue-grows",
    title="The default queue under a burst",
    question="Without an admission limit, are requests past --max-num-seqs ever refused, how does their time to "
             "first token grow with their place in the queue, and what happens to a request whose client stops "
             "waiting?",
    pages=("overload.md",),
    variant="max-num-seqs-1",
    collect=collect,
    claims=(
        Claim("queue-grows.none-refused", f"Without a limit nothing is refused: {REQUESTS} requests sent at once to "
              "a server that runs one at a time are all answered in full.", decide_none_refused),
        Claim("queue-grows.ttft-arithmetic", "A request's time to first token is the answers ahead of it: at "
              "position k it is k times one answer's time, within the declared tolerance.", decide_arithmetic,
              timing=True),
        Claim("queue-grows.impatient-unseen", "A queued request whose client gives up is dropped without a trace "
              "in vLLM's own series (vllm:): it generates no token, and neither the finished-request counter (not "
              "even as an abort) nor the latency histograms count it.", decide_impatient_unseen),
        Claim("queue-grows.impatient-in-log", "The server's request log (--enable-log-requests) does name it: an "
              "abort line for the request given up in the queue.", decide_impatient_in_log),
        Claim("queue-grows.impatient-http-2xx", "The API server's HTTP counter, http_requests_total, counts the "
              "request given up in the queue as a success (status 2xx), though its client got no answer.",
              decide_impatient_http_2xx),
    ),
)
