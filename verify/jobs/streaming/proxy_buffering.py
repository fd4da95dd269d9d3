"""Does a proxy turn the stream back into a letter? The same stream, captured through each path."""

from __future__ import annotations

import functools

from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if
from verify.measure import units

PATHS = ("direct", "nginx-default", "nginx-tls", "nginx-streaming", "nginx-tls-streaming")
MAX_TOKENS = 80
# Lines that arrive within this window of each other count as one delivery.
GROUP_WINDOW_S = 0.005
# "In blocks": fewer than half as many deliveries as events. "One at a time": at least 80 %.
BLOCKS_BELOW = 0.5
SMOOTH_ABOVE = 0.8
# A stream must carry at least half the events it asked for (max_tokens) for its deliveries to
# say anything: one event is always "one delivery per event".
MIN_EVENTS_SHARE = 0.5
# The server's own TTFT through a proxy counts as "as fast as directly" within this much.
SERVER_TTFT_TOLERANCE_S = 0.1
# A stream that failed through a path is captured again, up to this many times in all.
ATTEMPTS = 3
SERVER_SIDE = ("vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds")


def collect(ctx) -> dict:
    return capture_paths(ctx, PATHS)


def capture_paths(ctx, paths, max_tokens: int = MAX_TOKENS) -> dict:
    """The same stream through each path ("direct" or a proxy set-up), with the server's own view of each.

    A capture that failed (an error, a non-2xx status, nothing received) is tried again, up to
    ATTEMPTS in all, and the failed attempts are kept in the record with the proxy's log lines of
    the moment: Caddy 2.6 at times ends a streamed POST with an empty 200 when the machine is busy
    (its log: "reading from backend ... use of closed network connection"), and one empty reply
    must not leave six delivery claims unsettled, nor disappear from the record.
    """
    from verify.captures import failure
    from verify.measure.metrics import delta, read_all, wait_idle
    from verify.measure.sse import capture
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story about the sea."}],
            "max_tokens": max_tokens, "temperature": 0, "stream": True, "ignore_eos": True}
    out, server_side, earlier = {}, {}, {}
    for path in paths:
        proxy = None if path == "direct" else ctx.proxy(path)
        for attempt in range(1, ATTEMPTS + 1):
            wait_idle(ctx.server.url)
            before = read_all(ctx.server.url)
            log_before = len(proxy.error_log()) if proxy else 0
            if proxy is None:
                got = capture(ctx.base_url + "/chat/completions", body)
            else:
                got = capture(proxy.url + "/v1/chat/completions", body,
                              verify=str(proxy.ca_file) if proxy.ca_file else True)
            got.pop("request")
            wait_idle(ctx.server.url)
            why = failure(got)
            if why is None or attempt == ATTEMPTS:
                break
            # Kept untagged: a failed attempt that was tried again does not fail the job's capture.
            earlier.setdefault(path, []).append(
                {"attempt": attempt, "why": why, "stream": {k: v for k, v in got.items() if k != "capture"},
                 "proxy_log": proxy.error_log()[log_before:][-6:] if proxy else []})
        out[path] = got
        # The server's own view of the same request: its TTFT and e2e histograms gain one observation each.
        server_side[path] = delta(before, read_all(ctx.server.url), "vllm:")
    return {"captures": out, "server_side": server_side, "earlier_attempts": earlier, "request": body,
            "group_window_s": GROUP_WINDOW_S}


def server_seconds(d: dict, path: str, metric: str) -> float | None:
    """The server's own measure of the request on that path (one histogram observation), in seconds."""
    m = d["server_side"][path]
    count = m.get(metric + "_count")
    return round(m[metric + "_sum"], 4) if count == 1 else None


def delivery(capture: dict, window: float = GROUP_WINDOW_S) -> dict:
    times = [i["t"] for i in capture["lines"] if i["line"].startswith("data: ")]
    first_text = next((i["t"] for i in capture["lines"] if i["line"].startswith("data: {") and '"content":"' in i["line"]
                       and '"content":""' not in i["line"]), None)
    groups = 0
    last = None
    for t in times:
        if last is None or t - last > window:
            groups += 1
        last = t
    return {"events": len(times), "deliveries": groups, "ratio": groups / len(times) if times else 0.0,
            "ttft": first_text, "e2e": times[-1] if times else None}


def _decide_path(path, in_blocks, d):
    x = delivery(d["captures"][path])
    direct = delivery(d["captures"]["direct"])
    least = int(d["request"]["max_tokens"] * MIN_EVENTS_SHARE)
    if min(x["events"], direct["events"]) < least:
        return Verdict(INCONCLUSIVE, f"{path}: {x['events']} events (direct: {direct['events']}); fewer than "
                                     f"{least} cannot show how they were delivered")
    ok = x["ratio"] < BLOCKS_BELOW if in_blocks else x["ratio"] >= SMOOTH_ABOVE
    return verdict_if(ok, f"{path}: {x['events']} events arrived in {x['deliveries']} deliveries "
                          f"({x['ratio'] * 100:.0f} %); first text after {units.ms(x['ttft'])} "
                          f"(direct: {direct['deliveries']} deliveries, first text after {units.ms(direct['ttft'])})")


def _decide(path, in_blocks):
    # A partial of a module-level rule, not a closure: the rule is looked up when it runs, so a
    # mutation tester (tests/mutation.sh) can switch its mutants on after import.
    return functools.partial(_decide_path, path, in_blocks)


def decide_server_unaffected(d):
    direct = server_seconds(d, "direct", SERVER_SIDE[0])
    found = {p: server_seconds(d, p, SERVER_SIDE[0]) for p in PATHS}
    if any(v is None for v in found.values()):
        return Verdict(INCONCLUSIVE, f"not one TTFT observation per request on every path: {found}")
    slow = max(found.values()) - direct
    blocked = delivery(d["captures"]["nginx-tls"])
    return verdict_if(slow <= SERVER_TTFT_TOLERANCE_S,
                      "the server's own TTFT: " + ", ".join(f"{p} {units.ms(v)}" for p, v in found.items()) +
                      f" (tolerance {units.ms(SERVER_TTFT_TOLERANCE_S)} over direct), while the client behind "
                      f"nginx-tls saw its first text after {units.ms(blocked['ttft'])}")


JOB = Job(
    id="proxy-buffering",
    title="Streams through proxies",
    question="Does nginx with default settings (plain, and with TLS termination) hold the stream back, and does "
             "proxy_buffering off fix it?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("proxy-buffering.nginx-default", "Through nginx with default settings, tokens reach the client in "
              "blocks rather than one at a time.", _decide("nginx-default", True), timing=True),
        Claim("proxy-buffering.nginx-tls", "Through nginx with default settings and TLS termination, tokens reach "
              "the client in blocks rather than one at a time.", _decide("nginx-tls", True), timing=True),
        Claim("proxy-buffering.server-unaffected", "Whatever the proxy does to the stream, the server produces it "
              "as fast as on the direct path: its own TTFT is the same on every path.", decide_server_unaffected,
              timing=True),
        Claim("proxy-buffering.nginx-streaming", "Through nginx tuned for streaming, tokens reach the client one at "
              "a time, as they do directly.", _decide("nginx-streaming", False), timing=True),
        Claim("proxy-buffering.nginx-tls-streaming", "With TLS termination and the streaming settings, tokens reach "
              "the client one at a time, as they do directly.", _decide("nginx-tls-streaming", False), timing=True),
    ),
)
