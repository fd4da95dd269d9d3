"""The server's time to first token against the client's: where each clock starts."""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median, ms
from verify.job import Claim, Job, verdict_if

TRIALS = 5
# The rules read the first text chunk and the queue, prefill and TTFT histograms, all settled by the first
# token; a few more keep the stream going past it.
MAX_TOKENS = 4
# The server's TTFT covers its queue and prefill; beyond them it may hold at most this much.
BEYOND_PREFILL_S = 0.05


def collect(ctx) -> dict:
    import time

    from verify.measure import metrics
    from verify.measure.sse import capture
    body = {"model": "chat", "messages": [{"role": "user", "content": "Describe a forest at dawn."}],
            "max_tokens": MAX_TOKENS, "temperature": 0, "stream": True, "ignore_eos": True}
    trials = []
    for _ in range(TRIALS):
        metrics.wait_idle(ctx.server.url)
        before = metrics.read_all(ctx.server.url)
        stream = capture(ctx.base_url + "/chat/completions", body)
        metrics.wait_idle(ctx.server.url)
        time.sleep(0.5)
        after = metrics.read_all(ctx.server.url)
        moved = metrics.delta(before, after, "vllm:")
        stream["histograms"] = {k: v for k, v in moved.items() if k.endswith(("_sum", "_count")) and (
            "time_to_first_token" in k or "queue_time" in k or "prefill_time" in k)}
        trials.append(stream)
    return {"trials": trials}


def client_ttft(stream) -> float:
    import json

    from verify.measure.transcript import chunk_text
    for item in stream["lines"]:
        if item["line"].startswith("data: {") and chunk_text(json.loads(item["line"][6:])):
            return item["t"]
    raise ValueError("no text arrived")


def server_clock(stream, name) -> float:
    """The one observation the trial's request added to a server histogram.

    Its _count must have moved by exactly one: a histogram that did not move (a metric renamed,
    a scrape missed) would otherwise read as 0 s and pass for an instant queue or prefill."""
    count = stream["histograms"].get(f"vllm:{name}_count")
    if count != 1:
        raise ValueError(f"vllm:{name} took {count or 0:.0f} observations in the trial, not one")
    return stream["histograms"].get(f"vllm:{name}_sum", 0.0)  # a _sum that did not move observed 0 s


def decide_shorter(d):
    pairs = [(client_ttft(t), server_clock(t, "time_to_first_token_seconds")) for t in d["trials"]]
    diffs = sorted(c - s for c, s in pairs)
    return verdict_if(all(x > 0 for x in diffs), f"client TTFT minus server TTFT over {len(diffs)} requests: median "
                                                 f"{diffs[len(diffs) // 2] * 1000:.1f} ms, range {diffs[0] * 1000:.1f} to "
                                                 f"{diffs[-1] * 1000:.1f} ms")


def decide_covers(d):
    rows = []
    for t in d["trials"]:
        ttft = server_clock(t, "time_to_first_token_seconds")
        inside = server_clock(t, "request_queue_time_seconds") + server_clock(t, "request_prefill_time_seconds")
        rows.append((ttft, inside))
    ok = all(inside <= ttft <= inside + BEYOND_PREFILL_S for ttft, inside in rows)
    return verdict_if(ok, "server TTFT vs queue + prefill: " + ", ".join(f"{a * 1000:.0f} / {b * 1000:.0f} ms" for a, b in rows)
                      + f" (TTFT must cover them and exceed them by at most {BEYOND_PREFILL_S * 1000:.0f} ms)")


# --- headline figures

def _server_ttft(t) -> float:
    # Strict: _server reads a missing _sum as 0, which would show as a move here.
    return t["histograms"]["vllm:time_to_first_token_seconds_sum"]


HEADLINE = Headline({
    "client time to first token, median": lambda d: ms(median(client_ttft(t) for t in d["trials"])),
    "server time to first token (histogram), median": lambda d: ms(median(_server_ttft(t) for t in d["trials"])),
    "client minus server time to first token, median":
        lambda d: ms(median(client_ttft(t) - _server_ttft(t) for t in d["trials"])),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")


JOB = Job(
    id="ttft-clocks",
    title="Server TTFT against client TTFT",
    question="What does the server's time to first token measure compared with the client's, and where does each "
             "clock start?",
    pages=("lifecycle.md",),
    collect=collect,
    claims=(
        Claim("ttft-clocks.server-shorter", "The server's time to first token is shorter than the client's: the "
              "client's also holds the HTTP round trip and its own parsing.", decide_shorter),
        Claim("ttft-clocks.covers-queue-and-prefill", "On an idle server, the server's time to first token is the "
              "queue time plus the prefill time, and little more.", decide_covers, timing=True),
    ),
    headline=HEADLINE,
)
