"""What nginx's proxy_read_timeout bounds: the whole response, or the silence between two reads?

Three requests through nginx with a deliberately short read timeout: a stream
that lasts several times the timeout with short gaps between tokens, a stream
whose first token comes only after a prefill longer than the timeout, and a
non-streaming request whose generation takes longer than the timeout. The slow
prefill and the non-streaming generation are also timed directly, to show they
really exceed the timeout. How many tokens make a stream outlast the timeout
depends on the machine, so a short direct stream measures the gap between tokens
first and the token counts follow from it (both are in the record).
"""

from __future__ import annotations

import re

from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if
from verify.measure import units

SETUP = "nginx-short-read-timeout"
CONFIG = "nginx/short-read-timeout.conf"
# About 1,500 prompt tokens: a prefill of several seconds on the embedded profile.
LONG_PROMPT = "Summarise this in one line. " + "The quick brown fox jumps over the lazy dog. " * 150
SHORT_PROMPT = "Tell a long story about the sea."
CALIBRATION_TOKENS = 32  # a direct stream that measures the gap between tokens on this machine
# Bounds on the derived counts (the context is 2,048 tokens). The floor stays below what the
# non-streaming request needs (about 47 tokens for a 2 s timeout here), so it does not lengthen it.
MIN_TOKENS, MAX_TOKENS = 40, 1500
# The stream must outlast the timeout by this factor for "the whole response" to be ruled out.
OUTLAST_FACTOR = 2.0
# The derived counts aim this much past what they need, so that a faster moment still suffices.
MARGIN = 1.5


def _body(prompt: str, max_tokens: int, stream: bool) -> dict:
    import uuid
    # A fresh cache_salt per request: a prefix-cache hit would skip the very prefill being timed.
    return {"model": "chat", "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, "stream": stream, "ignore_eos": True, "cache_salt": uuid.uuid4().hex}


def _rest(streamed: dict) -> dict:
    """An sse capture's recorded fields but its tag, outcome and lines (the capture API sets those)."""
    return {k: v for k, v in streamed.items() if k not in ("capture", "status", "error", "lines")}


def _cut_capture(streamed: dict) -> dict:
    """A request through the short timeout, expected to be cut off: by a 504, or by nginx closing a
    stream whose headers it had already passed on. Receiving a status line is what counts as
    received; a refused connection or a 502 (the server gone) still fails the capture."""
    from verify.measure import capture
    status_line = [streamed["status"]] if streamed["status"] is not None else []
    return capture.results("proxy-response", status_line, statuses=[streamed["status"]], error=streamed["error"],
                           **_rest(streamed), expect_status=[504], expect_error=True, body_lines=streamed["lines"])


def _whole_body(streamed: dict) -> dict:
    """A non-streaming answer: its body is one JSON line, not SSE events; the lines received count."""
    from verify.measure import capture
    return capture.results("request", [x for x in streamed["lines"] if x["line"]], statuses=[streamed["status"]],
                           error=streamed["error"], **_rest(streamed), body_lines=streamed["lines"])


def collect(ctx) -> dict:
    from verify.measure.metrics import wait_idle
    from verify.measure.sse import capture
    config = ctx.snippet_path(CONFIG).read_text()
    timeout_s = float(re.search(r"proxy_read_timeout\s+(\d+)s;", config).group(1))
    proxy = ctx.proxy(SETUP)
    via = proxy.url + "/v1/chat/completions"
    out = {"timeout_s": timeout_s}
    wait_idle(ctx.server.url)
    out["calibration"] = capture(ctx.base_url + "/chat/completions", _body(SHORT_PROMPT, CALIBRATION_TOKENS, True))
    out["tokens"] = _token_counts(timing_of(out["calibration"]), timeout_s)
    wait_idle(ctx.server.url)
    out["long_stream"] = capture(via, _body(SHORT_PROMPT, out["tokens"]["long_stream"], True))
    wait_idle(ctx.server.url)
    out["slow_first_token_direct"] = capture(ctx.base_url + "/chat/completions", _body(LONG_PROMPT, 5, True))
    wait_idle(ctx.server.url)
    out["slow_first_token"] = _cut_capture(capture(via, _body(LONG_PROMPT, 5, True)))
    wait_idle(ctx.server.url)
    out["non_streaming_direct"] = _whole_body(capture(ctx.base_url + "/chat/completions",
                                                      _body(SHORT_PROMPT, out["tokens"]["non_streaming"], False)))
    wait_idle(ctx.server.url)
    out["non_streaming"] = _cut_capture(capture(via, _body(SHORT_PROMPT, out["tokens"]["non_streaming"], False)))
    wait_idle(ctx.server.url)
    out["access_log"] = proxy.access_log()[-4:]
    for key in ("calibration", "long_stream", "slow_first_token_direct", "slow_first_token", "non_streaming_direct",
                "non_streaming"):
        out[key].pop("request")
    return out


def _token_counts(calibration: dict, timeout_s: float) -> dict:
    """Tokens for a stream that outlasts the timeout OUTLAST_FACTOR times, and for a generation longer than it."""
    import math
    gap = (calibration["end"] - calibration["first_text"]) / max(calibration["events"] - 2, 1) \
        if calibration["end"] is not None and calibration["first_text"] is not None else None
    if not gap or gap <= 0:  # nothing measured: the largest counts (the capture itself says what failed)
        return {"gap_s": None, "long_stream": MAX_TOKENS, "non_streaming": MAX_TOKENS}
    need = lambda seconds: max(MIN_TOKENS, min(MAX_TOKENS, math.ceil(MARGIN * seconds / gap)))  # noqa: E731
    return {"gap_s": round(gap, 4), "long_stream": need(OUTLAST_FACTOR * timeout_s), "non_streaming": need(timeout_s)}


def timing_of(cap: dict) -> dict:
    lines = cap["lines"] if "lines" in cap else cap["body_lines"]
    data = [i for i in lines if i["line"].startswith("data: ")]
    times = [i["t"] for i in lines]
    first_text = next((i["t"] for i in data if '"content":"' in i["line"] and '"content":""' not in i["line"]), None)
    gaps = [b["t"] - a["t"] for a, b in zip(data, data[1:])]
    return {"status": cap["status"], "done": any(i["line"] == "data: [DONE]" for i in data),
            "first_text": first_text, "first_line": times[0] if times else None,
            "end": times[-1] if times else cap.get("ended_s"), "max_gap": max(gaps) if gaps else None, "events": len(data)}


def decide_long_stream(d):
    t, limit = timing_of(d["long_stream"]), d["timeout_s"]
    lasted = t["end"] - t["first_text"] if t["end"] is not None and t["first_text"] is not None else 0
    if lasted < OUTLAST_FACTOR * limit:
        return Verdict(INCONCLUSIVE, f"the stream lasted only {lasted:.1f} s, not {OUTLAST_FACTOR:.0f}x the "
                                     f"{limit:.0f} s timeout")
    return verdict_if(t["done"] and t["max_gap"] < limit,
                      f"a stream of {t['events']} events lasted {lasted:.1f} s through a {limit:.0f} s read timeout; "
                      f"longest gap {units.ms(t['max_gap'])}; [DONE] {'received' if t['done'] else 'missing'}")


def decide_slow_first_token(d):
    direct, via, limit = timing_of(d["slow_first_token_direct"]), timing_of(d["slow_first_token"]), d["timeout_s"]
    if direct["first_text"] is None or direct["first_text"] <= limit:
        return Verdict(INCONCLUSIVE, f"directly, the first text came after {units.ms(direct['first_text'])}, "
                                     f"not longer than the {limit:.0f} s timeout")
    cut = via["status"] == 504 or not via["done"]
    return verdict_if(cut and via["first_text"] is None,
                      f"directly, the first text came after {units.ms(direct['first_text'])}; through nginx "
                      f"with a {limit:.0f} s read timeout: HTTP {via['status']}, "
                      f"{'no text' if via['first_text'] is None else 'text'} received, response ended after "
                      f"{units.ms(via['end'])}")


def decide_non_streaming(d):
    direct, via, limit = timing_of(d["non_streaming_direct"]), timing_of(d["non_streaming"]), d["timeout_s"]
    n = d["tokens"]["non_streaming"]
    if direct["end"] is None or direct["end"] <= limit:
        return Verdict(INCONCLUSIVE, f"directly, generating {n} tokens took {units.ms(direct['end'])}, not longer "
                                     f"than the {limit:.0f} s timeout")
    return verdict_if(via["status"] == 504 and via["end"] is not None and via["end"] >= limit,
                      f"a non-streaming request generating {n} tokens ({units.ms(direct['end'])} directly) through "
                      f"a {limit:.0f} s read timeout: HTTP {via['status']} after {units.ms(via['end'])}")


JOB = Job(
    id="proxy-read-timeout",
    title="What proxy_read_timeout bounds",
    question="Does nginx's proxy_read_timeout limit a whole streamed response, or only the silence between two "
             "reads from the server, and what does that mean for slow prefills and non-streaming requests?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("proxy-read-timeout.long-stream-completes", "A stream that lasts several times proxy_read_timeout "
              "completes, as long as no gap between tokens is longer than the timeout.", decide_long_stream,
              timing=True),
        Claim("proxy-read-timeout.slow-first-token-cut", "A stream whose first token comes later than "
              "proxy_read_timeout (a long prefill, or a long wait in the queue) is cut off before any text arrives.",
              decide_slow_first_token, timing=True),
        Claim("proxy-read-timeout.non-streaming-cut", "A non-streaming request whose generation takes longer than "
              "proxy_read_timeout fails with HTTP 504: for it, the whole generation is one silence.",
              decide_non_streaming, timing=True),
    ),
)
