"""The checks a probe runs, each tied to the claim on the site that explains it.

The rules are the site's own: delivery in blocks or one at a time uses the
proxy-buffering job's grouping and thresholds, and the chunk checks read
streams with the same transcript helpers. A check whose data cannot settle it (a
stream partly grouped after every repeat, a stream that stayed empty) says
"unknown", and the probe's exit status says so: unknown is never agreement. A
check the reader did not ask for (cancellation without the engine's metrics)
says "not checked".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from verify.job import CONFIRMED
from verify.jobs.streaming import chunk_shapes, proxy_buffering
from verify.jobs.streaming._cancellation import STOP_TOLERANCE_S
from verify.measure import metrics, transcript

OK, DIFFERS, UNKNOWN, NOT_CHECKED = "ok", "differs", "unknown", "not checked"
COUNTING_PROMPT = "Count from 1 to 200, separated by spaces."
SHORT_PROMPT = "Say hi."
STREAM_TOKENS = 40
LENGTH_TOKENS = 8
STOP_TOKENS_LIMIT = 200
CANCEL_TOKENS = 400
LEAVE_AFTER_S = 1.0
# How long the engine gets to notice a client that left: the site's own cancellation tolerance.
CANCEL_TOLERANCE_S = STOP_TOLERANCE_S
# A client that was not scheduled in time also reads events in clumps, for one stream; a
# buffering proxy groups every stream. So a grouped stream is asked again, up to this many in
# all, and the verdict comes from the least grouped one; a least grouped stream that is still
# between the site's two thresholds (partly grouped) is asked again up to DELIVERY_TRIES_UNSURE.
DELIVERY_TRIES = 3
DELIVERY_TRIES_UNSURE = 6


@dataclass
class Check:
    id: str
    question: str
    verdict: str
    measured: str
    claim: str  # the page and claim anchor on the site, relative to its root

    def as_record(self) -> dict:
        return {"id": self.id, "question": self.question, "verdict": self.verdict, "measured": self.measured,
                "claim": self.claim}


def _chat(model: str, prompt: str, max_tokens: int, **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, "stream": True, **extra}


def _choice_chunks(lines):
    return [c for c in transcript.chunks(lines) if c.get("choices")]


def _finish(lines) -> tuple[str | None, str | None]:
    """finish_reason and the text on the chunk that carries it."""
    for c in _choice_chunks(lines):
        if c["choices"][0].get("finish_reason"):
            return c["choices"][0]["finish_reason"], transcript.chunk_text(c)
    return None, None


def delivery_check(streams: list[dict], url: str = "") -> Check:
    """streams: the counting stream and its repeats; the least grouped one decides. url: the endpoint
    probed (its scheme picks the claim to link)."""
    x = max((proxy_buffering.delivery(s) for s in streams), key=lambda d: d["ratio"])
    tries = f" (least grouped of {len(streams)} streams)" if len(streams) > 1 else ""
    if x["ratio"] >= proxy_buffering.SMOOTH_ABOVE:
        verdict, how = OK, "one at a time"
    elif x["ratio"] < proxy_buffering.BLOCKS_BELOW:
        verdict, how = DIFFERS, "in blocks"
    else:
        verdict, how = UNKNOWN, "partly grouped"
    first = f"{x['ttft'] * 1000:.0f} ms" if x["ttft"] is not None else "never"
    seen, claim = proxy_in_front(streams[0].get("headers") or {}, url)
    return Check("delivery", "Do tokens reach the client one at a time?", verdict,
                 f"{how}: {x['events']} events in {x['deliveries']} deliveries; first text after {first}{tries}; "
                 f"{seen}", claim)


# Which proxy answered, from the headers a proxy adds (verify.live.proxy.SERVER_HEADERS, as
# observed): nginx replaces the upstream's Server header with its own, Caddy adds "Server: Caddy"
# next to the upstream's; HAProxy adds nothing at its defaults. Each with the claim that measured
# its default on the listener probed: TLS termination for an https URL, plain HTTP otherwise.
PROXY_CLAIMS = {("nginx", "https"): "streaming/#claim-proxy-buffering--nginx-tls",
                ("nginx", "http"): "streaming/#claim-proxy-buffering--nginx-default",
                ("Caddy", "https"): "streaming/#claim-other-proxies--caddy-tls",
                ("Caddy", "http"): "streaming/#claim-other-proxies--caddy-default"}
CANDIDATES = "streaming/#experiment-4"


def proxy_in_front(headers: dict, url: str = "") -> tuple[str, str]:
    """What the response headers say about a proxy in front of vLLM, and the claim to link for the
    listener probed (the URL's scheme)."""
    server, via = headers.get("server", ""), headers.get("via", "")
    scheme = "https" if url.startswith("https:") else "http"
    if "caddy" in via.lower() or "caddy" in server.lower():
        return f"proxy seen: Caddy (Server {server!r}, {scheme})", PROXY_CLAIMS["Caddy", scheme]
    if "nginx" in server.lower():
        return f"proxy seen: nginx (Server {server!r}, {scheme})", PROXY_CLAIMS["nginx", scheme]
    named = f"Server {server!r}" if server else "no Server header"
    return (f"no proxy named itself ({named}{f', Via {via!r}' if via else ''}); a proxy that adds no header "
            "(HAProxy at its defaults) cannot be told from none: nginx, Caddy and HAProxy are measured in the "
            "article"), CANDIDATES


def _came_back_empty(stream: dict) -> bool:
    """A stream with no data: line at all: a failed capture (a proxy's empty 200), which says nothing."""
    return not any(i["line"].startswith("data: ") for i in stream["lines"])


def first_chunk_check(stream: dict) -> Check:
    """The chunk-shapes job's own rule, on this one stream."""
    if _came_back_empty(stream):
        return Check("first-chunk", "Does the first chunk carry the role and an empty string?", UNKNOWN,
                     f"not measured: the stream came back empty every time (HTTP {stream.get('status')})",
                     "streaming/#claim-chunk-shapes--first-chunk-role")
    chunks = _choice_chunks(stream["lines"])
    delta = chunks[0]["choices"][0].get("delta", {}) if chunks else {}
    try:
        ok = chunk_shapes.decide_first({"streams": {"probe": stream}}).verdict == CONFIRMED
    except (StopIteration, LookupError, TypeError):  # no chunk, or none that finishes
        ok = False
    return Check("first-chunk", "Does the first chunk carry the role and an empty string?", OK if ok else DIFFERS,
                 f"role {delta.get('role')!r}, content {delta.get('content', '<absent>')!r}",
                 "streaming/#claim-chunk-shapes--first-chunk-role")


def usage_check(stream: dict) -> Check:
    data = [i["line"] for i in stream["lines"] if i["line"].startswith("data: ")]
    chunks = transcript.chunks(stream["lines"])
    last = chunks[-1] if chunks else {}
    ok = bool(last.get("usage")) and last.get("choices") == [] and len(data) >= 2 and data[-1] == "data: [DONE]"
    return Check("usage-chunk", "With include_usage, is the last chunk before [DONE] the usage chunk?",
                 OK if ok else DIFFERS, f"last chunk: choices {last.get('choices', '<absent>')!r:.20}, usage "
                 f"{'present' if last.get('usage') else 'absent'}", "streaming/#claim-usage-in-stream--final-chunk")


def done_check(streams: list[dict]) -> Check:
    ended = [bool(s["lines"]) and any(i["line"] == "data: [DONE]" for i in s["lines"]) for s in streams]
    return Check("done", "Does every complete stream end with data: [DONE]?", OK if all(ended) else DIFFERS,
                 f"{sum(ended)} of {len(ended)} streams ended with [DONE]", "streaming/#claim-wire-format--sse-framing")


def finish_check(stream: dict, expected: str, max_tokens: int) -> Check:
    reason, text = _finish(stream["lines"])
    if _came_back_empty(stream):
        verdict = UNKNOWN  # a failed capture: nothing to say about finish_reason
    elif expected == "stop" and reason == "length":
        verdict = UNKNOWN  # the model did not stop within the limit: nothing to say about stop
    else:
        verdict = OK if reason == expected else DIFFERS
    return Check(f"finish-{expected}", f"Does a stream that {'ends by itself' if expected == 'stop' else 'hits max_tokens'} "
                 f"carry finish_reason {expected!r}?", verdict,
                 f"finish_reason {reason!r} (max_tokens {max_tokens}), text on its chunk {text!r}",
                 f"streaming/#claim-finish-reasons--{expected}")


def cancel_check(endpoint, model: str, metrics_url: str | None) -> tuple[Check, dict]:
    question = "When a client leaves mid-stream, does the engine stop generating?"
    claim = "streaming/#claim-cancel-direct--httpx"
    if not metrics_url:
        return Check("cancellation", question, NOT_CHECKED, "not asked for: the engine's /metrics is needed "
                     "(--metrics-url)", claim), {}
    base = metrics_url.removesuffix("/metrics")
    before = _read_metrics(base)
    stream = endpoint.stream(_chat(model, COUNTING_PROMPT, CANCEL_TOKENS, ignore_eos=True),
                             stop_after_s=LEAVE_AFTER_S)
    left = stream["left_at"] or time.perf_counter()
    samples = []
    noticed_after = None
    while time.perf_counter() - left < CANCEL_TOLERANCE_S + 1.0:
        m = _read_metrics(base)
        t = round(time.perf_counter() - left, 3)
        samples.append({"t": t, "running": m["vllm:num_requests_running"],
                        "generated": m["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]})
        if m["vllm:num_requests_running"] <= before["vllm:num_requests_running"]:
            noticed_after = t
            break
        time.sleep(0.05)
    if noticed_after is not None and noticed_after <= CANCEL_TOLERANCE_S:
        verdict, measured = OK, f"running requests back to {before['vllm:num_requests_running']:.0f} " \
                                f"{noticed_after:.2f} s after the client left"
    else:
        verdict, measured = DIFFERS, (f"a request was still running {CANCEL_TOLERANCE_S + 1.0:.0f} s after the client "
                                      "left (on a busy server, other traffic can also cause this)")
    return Check("cancellation", question, verdict, measured, claim), {"cancel_stream": stream, "metrics": samples}


def _read_metrics(base: str) -> dict:
    import httpx

    from verify.errors import VerifyError
    try:
        return metrics.read(base)
    except (httpx.HTTPError, ValueError) as e:
        raise VerifyError(f"cannot read the engine's metrics at {base}/metrics: {type(e).__name__}") from None


def _ask_again(streams: int, best_ratio: float) -> bool:
    """Whether to ask for another counting stream: none yet one at a time, within DELIVERY_TRIES; or
    the least grouped so far only partly grouped (neither verdict), within DELIVERY_TRIES_UNSURE."""
    if best_ratio >= proxy_buffering.SMOOTH_ABOVE:
        return False
    if best_ratio >= proxy_buffering.BLOCKS_BELOW:
        return streams < DELIVERY_TRIES_UNSURE
    return streams < DELIVERY_TRIES


def run_checks(endpoint, model: str, metrics_url: str | None, progress=print) -> tuple[list[Check], dict]:
    """Every check, in a fixed, small number of requests; returns the checks and the raw captures."""
    def stream(body: dict) -> dict:
        # A proxy may answer a streamed request with an empty 200 on a busy machine (the streaming
        # article's Caddy finding): such a stream is asked again, up to DELIVERY_TRIES in all.
        got = endpoint.stream(body)
        for _ in range(DELIVERY_TRIES - 1):
            if not _came_back_empty(got):
                break
            progress("probe: the stream came back empty; asking again")
            got = endpoint.stream(body)
        return got

    progress(f"probe: a {STREAM_TOKENS}-token stream with usage")
    counting = stream(_chat(model, COUNTING_PROMPT, STREAM_TOKENS, stream_options={"include_usage": True}))
    progress(f"probe: a {LENGTH_TOKENS}-token stream cut by max_tokens")
    cut = stream(_chat(model, COUNTING_PROMPT, LENGTH_TOKENS))
    progress("probe: a short answer that ends by itself")
    short = stream(_chat(model, SHORT_PROMPT, STOP_TOKENS_LIMIT))
    repeats = []
    while _ask_again(len(repeats) + 1, max(proxy_buffering.delivery(s)["ratio"] for s in [counting, *repeats])):
        progress("probe: the stream arrived grouped; asking again")
        repeats.append(endpoint.stream(_chat(model, COUNTING_PROMPT, STREAM_TOKENS)))
    checks = [delivery_check([counting] + repeats, endpoint.base_url), first_chunk_check(counting), usage_check(counting),
              finish_check(short, "stop", STOP_TOKENS_LIMIT), finish_check(cut, "length", LENGTH_TOKENS),
              done_check([counting, cut, short])]
    progress("probe: a stream abandoned after 1 s" if metrics_url else "probe: cancellation skipped (no --metrics-url)")
    cancel, cancel_raw = cancel_check(endpoint, model, metrics_url)
    checks.append(cancel)
    for s in (counting, cut, short, *repeats):
        s.pop("left_at", None)
    streams = {"counting": counting, "cut": cut, "short": short}
    streams.update({f"counting-again-{i}": s for i, s in enumerate(repeats, 1)})
    return checks, {"streams": streams, **cancel_raw}
