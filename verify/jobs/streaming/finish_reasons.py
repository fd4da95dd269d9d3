"""Why a stream ends: captured streams that end with stop, with length, and cut off by a proxy stopping."""

from __future__ import annotations

import threading
import time

from verify.job import Claim, Job, verdict_if
from verify.measure.transcript import chunks, payloads

SNIPPETS = ("streaming/safe_stream.py",)
CUT_AFTER_S = 1.5


def _stream(url, body, cut=None):
    """A stream captured with its arrival times; with cut, the proxy is stopped CUT_AFTER_S in."""
    from verify.measure.sse import capture
    timer = threading.Timer(CUT_AFTER_S, cut) if cut else None
    if timer:
        timer.start()
    try:
        out = capture(url, body, timeout=60)
    finally:
        if timer:
            timer.cancel()
    # A stream that is cut is meant to end in an error; it must still have started.
    return {**out, "expect_error": bool(cut)}


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure.metrics import wait_idle
    url = ctx.base_url + "/chat/completions"
    ask = {"model": "chat", "temperature": 0, "stream": True}
    data = {
        "stop": _stream(url, {**ask, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 200}),
        "length": _stream(url, {**ask, "messages": [{"role": "user", "content": "Describe the sea."}], "max_tokens": 8}),
    }
    # A proxy of its own, so stopping it mid-stream does not disturb other jobs.
    with ctx.private_proxy("nginx-streaming") as proxy:
        body = {**ask, "messages": [{"role": "user", "content": "Write a long story."}], "max_tokens": 400,
                "ignore_eos": True}
        data["broken"] = _stream(proxy.url + "/v1/chat/completions", body, cut=proxy.stop_now)
    wait_idle(ctx.server.url)
    # The page's client, on each kind of ending.
    snippet = ctx.snippet(SNIPPETS[0])
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    for kind, params in (("stop", {"max_tokens": 200}), ("length", {"max_tokens": 8})):
        msg = "Say hi." if kind == "stop" else "Describe the sea."
        answer = snippet.stream_answer(client, [{"role": "user", "content": msg}], temperature=0, **params)
        data[f"snippet_{kind}"] = {"finish_reason": answer["finish_reason"], "truncated": answer["truncated"]}
    return data


def _ending(stream):
    data = payloads(stream["lines"])
    reasons = [c["choices"][0].get("finish_reason") for c in chunks(stream["lines"]) if c.get("choices")]
    return {"finish_reason": next((r for r in reasons if r), None), "done": "[DONE]" in data,
            "events": len(data), "error": stream.get("error")}


def decide_stop(d):
    e = _ending(d["stop"])
    return verdict_if(e["finish_reason"] == "stop" and e["done"] and d["snippet_stop"]["finish_reason"] == "stop",
                      f"an answer the model ended itself: finish_reason {e['finish_reason']!r}, [DONE] "
                      f"{'sent' if e['done'] else 'missing'}")


def decide_length(d):
    e = _ending(d["length"])
    return verdict_if(e["finish_reason"] == "length" and e["done"] and d["snippet_length"]["truncated"],
                      f"max_tokens=8: finish_reason {e['finish_reason']!r}, [DONE] {'sent' if e['done'] else 'missing'}")


def decide_broken(d):
    e = _ending(d["broken"])
    return verdict_if(e["finish_reason"] is None and not e["done"] and e["events"] > 0,
                      f"nginx stopped {CUT_AFTER_S} s into the stream: {e['events']} events arrived, finish_reason "
                      f"{e['finish_reason']!r}, [DONE] {'sent' if e['done'] else 'never sent'}; client saw "
                      f"{e['error'] or 'a clean end of body'}")


JOB = Job(
    id="finish-reasons",
    title="Why a stream ends",
    question="What do the ends of streams look like when the model stops, when max_tokens is hit, and when the "
             "connection breaks?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("finish-reasons.stop", "An answer the model ended itself carries finish_reason stop, then [DONE].", decide_stop),
        Claim("finish-reasons.length", "An answer cut by max_tokens carries finish_reason length, then [DONE].", decide_length),
        Claim("finish-reasons.broken", "A stream cut by a broken connection ends with no finish_reason and no [DONE].",
              decide_broken, timing=True),
    ),
)
