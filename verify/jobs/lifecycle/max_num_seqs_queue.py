"""Requests beyond --max-num-seqs: queued or rejected, and how the queue shows in the metrics.

Runs on the `max-num-seqs-1` server variant: three identical requests sent at
the same moment to a server that runs one sequence at a time.
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median
from verify.job import Claim, Job, verdict_if
from verify.measure.transcript import chunks

SNIPPET = "lifecycle/send_together.py"
REQUESTS = 3
MAX_TOKENS = 40
# The queue-time histogram agrees with the waits the clients saw within this factor.
QUEUE_TIME_AGREEMENT = 0.25
# A queued request's first token comes after at least this share of one full answer per request ahead of it.
SERIAL_SHARE = 0.8
# Each request's prefill stays within this many times a lone request's time to first token.
PREFILL_BOUND = 2.0


def collect(ctx) -> dict:
    import time

    from verify.measure import capture, metrics
    snippet = ctx.snippet(SNIPPET)
    metrics.wait_idle(ctx.server.url)
    before = metrics.read(ctx.server.url)
    before_all = metrics.read_all(ctx.server.url)
    sampler = metrics.Sampler(ctx.server.url)
    sampler.start()
    started_at = round(time.perf_counter() - sampler.t0, 3)
    results = snippet.send_together(ctx.base_url, REQUESTS, MAX_TOKENS)
    metrics.wait_idle(ctx.server.url)
    sampler.stop()
    after = metrics.read(ctx.server.url)
    moved = metrics.delta(before_all, metrics.read_all(ctx.server.url), "vllm:")
    # Each stream as the snippet read it (its status and timed lines); one event per data line received.
    # A request whose thread got no answer comes back empty: no status, no lines, a failed capture.
    streams = [capture.results("sse", [x for x in r.get("lines", []) if x["line"].startswith("data: ")],
                               statuses=[r.get("status")], **r) for r in results]
    return {"requests": streams,
            "sent_at_s": started_at, "samples": sampler.samples,
            "metrics_before": before, "metrics_after": after,
            "histograms": {k: v for k, v in moved.items() if k.endswith(("_sum", "_count")) and "_bucket" not in k}}


def request_timings(d) -> list[dict]:
    """Per request, when its first text and its last event arrived (s after the requests were sent)."""
    out = []
    for r in d["requests"]:
        data = [x for x in r["lines"] if x["line"].startswith("data: ")]
        first_text = next(x["t"] for x in data if x["line"] != "data: [DONE]" and
                          any((c.get("delta") or {}).get("content") for c in _choices(x["line"])))
        out.append({"ttft": first_text, "e2e": data[-1]["t"], "tokens": _tokens(r)})
    return sorted(out, key=lambda t: t["ttft"])


def _choices(line: str) -> list[dict]:
    return chunks([{"line": line}])[0].get("choices") or []


def _tokens(r) -> int:
    return sum(1 for c in chunks(r["lines"]) for ch in (c.get("choices") or []) if ch.get("delta", {}).get("content") is not None
               and not ch.get("delta", {}).get("role"))


def decide_served(d):
    statuses = [r["status"] for r in d["requests"]]
    reasons = [next((ch.get("finish_reason") for c in chunks(r["lines"]) for ch in (c.get("choices") or [])
                     if ch.get("finish_reason")), None) for r in d["requests"]]
    ok = all(s == 200 for s in statuses) and all(x == "length" for x in reasons)
    return verdict_if(ok, f"{len(statuses)} requests sent together to a server with --max-num-seqs 1: HTTP "
                          f"{', '.join(map(str, statuses))}; finish_reason {', '.join(map(str, reasons))} "
                          f"(each ran to max_tokens={MAX_TOKENS}); none was rejected")


def decide_one_running(d):
    running = max(s["num_requests_running"] for s in d["samples"])
    waiting = max(s["num_requests_waiting"] for s in d["samples"])
    return verdict_if(running == 1 and waiting >= REQUESTS - 1,
                      f"over {len(d['samples'])} metric readings 50 ms apart: at most {running:.0f} running, "
                      f"at most {waiting:.0f} waiting")


def decide_serial(d):
    t = request_timings(d)
    one_answer = t[0]["e2e"] - t[0]["ttft"]
    ok = all(t[k]["ttft"] >= SERIAL_SHARE * k * one_answer for k in range(1, len(t)))
    return verdict_if(ok, "first text after " + ", ".join(f"{x['ttft']:.2f} s" for x in t) +
                      f"; one answer takes {one_answer:.2f} s to stream, so each queued request waited for "
                      f"the ones ahead of it (threshold {SERIAL_SHARE:.0%} of one answer per request ahead)")


def decide_queue_metric(d):
    t = request_timings(d)
    waits = sum(x["ttft"] - t[0]["ttft"] for x in t)
    b, a = d["metrics_before"], d["metrics_after"]
    count = a["vllm:request_queue_time_seconds_count"] - b["vllm:request_queue_time_seconds_count"]
    total = a["vllm:request_queue_time_seconds_sum"] - b["vllm:request_queue_time_seconds_sum"]
    ok = count == REQUESTS and abs(total - waits) <= QUEUE_TIME_AGREEMENT * waits
    return verdict_if(ok, f"vllm:request_queue_time_seconds grew by {count:.0f} observations summing to {total:.2f} s; "
                          f"the clients' first-text times imply {waits:.2f} s of waiting in all "
                          f"(agreement within {QUEUE_TIME_AGREEMENT:.0%} required)")


def _hist(d, name) -> float:
    """What the job's requests added to a server histogram: one observation each, or it cannot say."""
    count = d["histograms"].get(f"vllm:{name}_count")
    if count != REQUESTS:
        raise ValueError(f"vllm:{name} took {count or 0:.0f} observations, not one per request ({REQUESTS})")
    return d["histograms"].get(f"vllm:{name}_sum", 0.0)


def decide_ttft_includes_queue(d):
    ttft, queue, prefill = (_hist(d, n) for n in ("time_to_first_token_seconds", "request_queue_time_seconds",
                                                  "request_prefill_time_seconds"))
    ok = ttft >= queue + prefill
    return verdict_if(ok, f"over the {REQUESTS} requests, the server's TTFT histogram grew by {ttft:.2f} s; queue "
                          f"{queue:.2f} s plus prefill {prefill:.2f} s = {queue + prefill:.2f} s")


def decide_prefill_excludes_queue(d):
    queue, prefill = _hist(d, "request_queue_time_seconds"), _hist(d, "request_prefill_time_seconds")
    t = request_timings(d)
    alone = t[0]["ttft"]  # the first request did not wait
    ok = prefill <= PREFILL_BOUND * REQUESTS * alone and prefill < queue
    return verdict_if(ok, f"prefill histogram grew by {prefill:.2f} s over {REQUESTS} requests (the request that did "
                          f"not wait had its first token after {alone:.2f} s); the queue histogram by {queue:.2f} s")


# --- headline figures

def _summed_waits(d) -> float:
    t = request_timings(d)
    return sum(x["ttft"] - t[0]["ttft"] for x in t)


# QUEUE_TIME_AGREEMENT (25 %) compares two clocks on the same requests; between runs of one
# release the waits themselves differ by up to about 30 %.
HEADLINE = Headline({
    "first text of the request served last (it waited for the others)": lambda d: request_timings(d)[-1]["ttft"],
    f"time to stream one {MAX_TOKENS}-token answer, first text to last event, median":
        lambda d: median(x["e2e"] - x["ttft"] for x in request_timings(d)),
    "waits the clients saw, summed over the requests": _summed_waits,
    "queue time the server recorded, summed (vllm:request_queue_time_seconds)":
        lambda d: d["histograms"]["vllm:request_queue_time_seconds_sum"],
}, TIMING_TOLERANCE, TIMING_WHY, "s")


JOB = Job(
    id="max-num-seqs-queue",
    title="Requests beyond --max-num-seqs",
    question="What happens to requests beyond --max-num-seqs: are they queued or rejected, and how do the waiting "
             "count and the queue-time histogram show it?",
    pages=("lifecycle.md", "prefill-decode.md", "openai-server.md"),
    variant="max-num-seqs-1",
    collect=collect,
    claims=(
        Claim("max-num-seqs-queue.queued-not-rejected", "Requests beyond --max-num-seqs are queued, not rejected: "
              "every one is answered in full.", decide_served),
        Claim("max-num-seqs-queue.waiting-count", "While the extra requests wait, vllm:num_requests_running stays at "
              "--max-num-seqs and vllm:num_requests_waiting counts the rest.", decide_one_running, timing=True),
        Claim("max-num-seqs-queue.served-one-after-another", "A queued request's first token comes only after the "
              "requests ahead of it have finished: the wait is part of its time to first token.", decide_serial,
              timing=True),
        Claim("max-num-seqs-queue.queue-time-histogram", "vllm:request_queue_time_seconds records each request once, "
              "and its sum matches the waits the clients saw.", decide_queue_metric, timing=True),
        Claim("max-num-seqs-queue.ttft-includes-queue", "The server's time-to-first-token histogram includes the time "
              "a request waited in the queue.", decide_ttft_includes_queue),
        Claim("max-num-seqs-queue.prefill-excludes-queue", "The prefill histogram does not include the wait: it starts "
              "when the request is first scheduled.", decide_prefill_excludes_queue, timing=True),
    ),
    headline=HEADLINE,
)
