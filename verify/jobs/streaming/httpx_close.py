"""Does closing an httpx stream drop the connection at once, or read the rest of the body first?

If httpx drained the body on close, the cancellation experiment would test
nothing: the server would see a healthy reader until the end. So it is
measured: how long the close takes on the client, and when the engine stops.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPETS = ("streaming/cancel_httpx.py",)
MAX_TOKENS = 600
READ_FOR_S = 2.0
# A close that drains would take as long as the rest of the generation (seconds), not milliseconds.
CLOSE_TOLERANCE_S = 0.1
STOP_TOLERANCE_S = 2.0


def collect(ctx) -> dict:
    import time

    import httpx

    from verify.measure import capture, metrics
    snippet = ctx.snippet(SNIPPETS[0])
    body = {**snippet.BODY, "max_tokens": MAX_TOKENS, "ignore_eos": True}
    metrics.wait_idle(ctx.server.url)
    before = metrics.read(ctx.server.url)
    lines = []
    with httpx.Client(timeout=None) as client:
        with client.stream("POST", f"{ctx.base_url}/chat/completions", json=body) as response:
            status = response.status_code
            start = time.perf_counter()
            for line in response.iter_lines():
                lines.append(line)
                if time.perf_counter() - start > READ_FOR_S:
                    break
            close_started = time.perf_counter()
        close_s = time.perf_counter() - close_started  # leaving the block closed the response
    watch = metrics.watch_until(ctx.server.url, lambda m: m["vllm:num_requests_running"] == 0, timeout_s=90)
    after = metrics.read(ctx.server.url)
    lines_read = len(lines)
    return {"stream": capture.results("stream-then-close", [line for line in lines if line], statuses=[status]),
            "close_seconds": round(close_s, 4), "lines_read_before_close": lines_read,
            "engine_stopped_after_s": watch["after_s"] if watch["reached"] else None,
            "generated_tokens": after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"],
            "max_tokens": MAX_TOKENS, "httpx_version": httpx.__version__, "samples": watch["samples"]}


def decide(d):
    prompt = (d["close_seconds"] <= CLOSE_TOLERANCE_S and d["engine_stopped_after_s"] is not None
              and d["engine_stopped_after_s"] <= STOP_TOLERANCE_S and d["generated_tokens"] < d["max_tokens"])
    stopped = "never" if d["engine_stopped_after_s"] is None else f"{d['engine_stopped_after_s']:.2f} s later"
    return verdict_if(prompt, f"httpx {d['httpx_version']}: leaving the stream block took {d['close_seconds'] * 1000:.1f} ms; "
                              f"the engine stopped {stopped}, after {d['generated_tokens']:.0f} of {d['max_tokens']} tokens")


JOB = Job(
    id="httpx-close",
    title="Closing an httpx stream",
    question="Does closing the httpx stream context drop the connection promptly rather than draining it first?",
    pages=("streaming.md",),
    collect=collect,
    claims=(Claim("httpx-close.prompt", "Leaving an httpx stream block closes the connection at once; it does not "
                  "read the rest of the body first.", decide, timing=True),),
)
