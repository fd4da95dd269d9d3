"""Does a proxy turn the stream back into a letter? The same stream, captured through each path."""

from __future__ import annotations

from verify.site import html as render
from verify.job import Claim, Job, verdict_if

PATHS = ("direct", "nginx-default", "nginx-tls", "nginx-streaming", "nginx-tls-streaming")
MAX_TOKENS = 80
# Lines that arrive within this window of each other count as one delivery.
GROUP_WINDOW_S = 0.005
# "In blocks": fewer than half as many deliveries as events. "One at a time": at least 80 %.
BLOCKS_BELOW = 0.5
SMOOTH_ABOVE = 0.8


def collect(ctx) -> dict:
    from verify.measure.metrics import wait_idle
    from verify.measure.sse import capture
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story about the sea."}],
            "max_tokens": MAX_TOKENS, "temperature": 0, "stream": True, "ignore_eos": True}
    out = {}
    for path in PATHS:
        wait_idle(ctx.server.url)
        if path == "direct":
            out[path] = capture(ctx.base_url + "/chat/completions", body)
        else:
            proxy = ctx.proxy(path)
            out[path] = capture(proxy.url + "/v1/chat/completions", body,
                                verify=str(proxy.ca_file) if proxy.ca_file else True)
        out[path].pop("request")
    return {"captures": out, "request": body, "group_window_s": GROUP_WINDOW_S}


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


def _decide(path, in_blocks):
    def decide(d):
        x = delivery(d["captures"][path])
        direct = delivery(d["captures"]["direct"])
        ok = x["ratio"] < BLOCKS_BELOW if in_blocks else x["ratio"] >= SMOOTH_ABOVE
        return verdict_if(ok, f"{path}: {x['events']} events arrived in {x['deliveries']} deliveries "
                              f"({x['ratio'] * 100:.0f} %); first text after {render.ms(x['ttft'])} "
                              f"(direct: {direct['deliveries']} deliveries, first text after {render.ms(direct['ttft'])})")
    return decide


def fragment(record):
    rows = []
    for path in PATHS:
        x = delivery(record["data"]["captures"][path])
        rows.append([path, x["events"], x["deliveries"], render.ms(x["ttft"]), render.ms(x["e2e"])])
    return render.table(["path", "SSE events", "separate deliveries (lines > 5 ms apart)", "first text seen by client",
                         "last line"], rows)


JOB = Job(
    id="proxy-buffering",
    title="Streams through proxies",
    question="Does nginx with default settings (plain, and with TLS termination) hold the stream back, and does "
             "proxy_buffering off fix it?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("proxy-buffering.nginx-default", "Through nginx with default settings, tokens reach the client in "
              "blocks rather than one at a time.", _decide("nginx-default", True)),
        Claim("proxy-buffering.nginx-tls", "Through nginx with default settings and TLS termination, tokens reach "
              "the client in blocks rather than one at a time.", _decide("nginx-tls", True)),
        Claim("proxy-buffering.nginx-streaming", "Through nginx tuned for streaming, tokens reach the client one at "
              "a time, as they do directly.", _decide("nginx-streaming", False)),
        Claim("proxy-buffering.nginx-tls-streaming", "With TLS termination and the streaming settings, tokens reach "
              "the client one at a time, as they do directly.", _decide("nginx-tls-streaming", False)),
    ),
    fragments={"table": fragment},
)
