"""How a request ends (stop, length, client disconnect, rejected), in the metrics and in the log.

The same four endings on two servers: one started with --enable-log-requests (the
default variant of the profiles here) and one without it, as an operator gets by default.
"""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if

ENDINGS = ("stop", "length", "abort", "too-long")
REQUEST_LOG = re.compile(r"Added request|[Aa]bort|Finished request|chatcmpl-")
SUCCESS = 'vllm:request_success_total{finished_reason="%s"}'
E2E_COUNT = "vllm:e2e_request_latency_seconds_count"


def _one(ctx, ending: str) -> dict:
    import time

    import httpx

    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    mark = ctx.server.log_size()
    url = ctx.base_url + "/chat/completions"
    base = {"model": "chat", "temperature": 0}
    with httpx.Client(timeout=120) as client:
        if ending in ("stop", "length"):
            r = client.post(url, json={**base, "messages": [{"role": "user", "content": "Say hi."}],
                                       "max_tokens": 200 if ending == "stop" else 5})
            choices = (capture.body(r) or {}).get("choices") or [{}]
            out = capture.response(r, ending=ending, finish_reason=choices[0].get("finish_reason"))
        elif ending == "abort":
            body = {**base, "messages": [{"role": "user", "content": "Tell a long story."}], "max_tokens": 300,
                    "ignore_eos": True, "stream": True}
            events = []
            with client.stream("POST", url, json=body) as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        events.append(line)
                    if len(events) >= 10:
                        break  # the client leaves mid-stream
            # The data lines read before leaving, and the stream's real status.
            out = capture.results("request", events, statuses=[r.status_code], ending=ending)
        else:
            r = client.post(url, json={**base, "messages": [{"role": "user", "content": "word " * 3000}],
                                       "max_tokens": 10})
            # The server is expected to refuse this one: its refusal is what is captured.
            error = (capture.body(r) or {}).get("error") or {}
            out = capture.response(r, expect_status=[400], ending=ending,
                                   error_body=(error.get("message") or "")[:200])
    metrics.wait_idle(ctx.server.url)
    time.sleep(0.5)  # counters move just after the request is done
    after = metrics.read_all(ctx.server.url)
    changed = metrics.delta(before, after)
    out["metrics_delta"] = {k: v for k, v in changed.items()
                            if (k.startswith("vllm:") or k.startswith("http_requests_total"))
                            and "_bucket" not in k and "_created" not in k}
    if ctx.server.managed:
        out["log_read"], lines = ctx.server.log_capture(mark)
        out["log"] = [line for line in lines if REQUEST_LOG.search(line)]
    else:
        out["log"] = []  # not readable: the log claims say so (d["managed"])
    return out


def collect(ctx) -> dict:
    return {"endings": {e: _one(ctx, e) for e in ENDINGS}, "managed": ctx.server.managed}


def _moved(d, ending) -> dict:
    return d["endings"][ending]["metrics_delta"]


def _success_moves(d, ending) -> dict:
    return {k: v for k, v in _moved(d, ending).items() if k.startswith("vllm:request_success_total")}


def decide_counted(d):
    rows = []
    ok = True
    for ending in ("stop", "length"):
        moved = _success_moves(d, ending)
        e2e = _moved(d, ending).get(E2E_COUNT, 0)
        ok &= moved == {SUCCESS % ending: 1.0} and e2e == 1
        rows.append(f"{ending}: request_success_total {moved or 'unchanged'}, e2e observations +{e2e:.0f}")
    return verdict_if(ok, "; ".join(rows))


def decide_abort(d):
    moved = _success_moves(d, "abort")
    e2e = _moved(d, "abort").get(E2E_COUNT, 0)
    ttft = _moved(d, "abort").get("vllm:time_to_first_token_seconds_count", 0)
    generated = _moved(d, "abort").get("vllm:generation_tokens_total", 0)
    if moved == {SUCCESS % "abort": 1.0}:
        return verdict_if(True, f"the disconnected request added 1 to finished_reason=abort")
    # The control: the same scrape saw the request run (its first token, its generated tokens), so a
    # counter that stayed still is the engine's choice, not a scrape that missed everything.
    seen = ttft == 1 and generated > 0
    return verdict_if(False if not moved and seen else None,
                      f"a client that left after 10 events: request_success_total {moved or 'unchanged under every finished_reason'}; "
                      f"e2e observations +{e2e:.0f}; time-to-first-token observations +{ttft:.0f}; generated tokens "
                      f"+{generated:.0f} (the request must be seen running for an unchanged counter to count)")


def decide_rejected(d):
    e = d["endings"]["too-long"]
    engine = {k: v for k, v in e["metrics_delta"].items() if k.startswith("vllm:")}
    http = {k: v for k, v in e["metrics_delta"].items() if k.startswith("http_requests_total")}
    ok = e["status"] == 400 and not engine and any('status="4xx"' in k for k in http)
    return verdict_if(ok, f"HTTP {e['status']}: {e.get('error_body', '')[:90]}...; engine metrics moved: "
                          f"{engine or 'none'}; HTTP metrics: {http}")


def _lines(d, ending, pattern):
    return [line for line in d["endings"][ending]["log"] if re.search(pattern, line)]


def decide_logged(d):
    if not d["managed"]:
        return verdict_if(None, "the log of a server given by URL is not readable here")
    added = {e: len(_lines(d, e, "Added request")) for e in ENDINGS}
    aborted = len(_lines(d, "abort", "[Aa]bort"))
    ok = added == {"stop": 1, "length": 1, "abort": 1, "too-long": 0} and aborted >= 1
    return verdict_if(ok, "'Added request' lines per ending: " + ", ".join(f"{k} {v}" for k, v in added.items()) +
                      f"; lines naming the abort: {aborted}")


def decide_silent(d):
    if not d["managed"]:
        return verdict_if(None, "the log of a server given by URL is not readable here")
    lines = {e: len(d["endings"][e]["log"]) for e in ENDINGS}
    return verdict_if(sum(lines.values()) == 0, "request-level log lines per ending: " +
                      ", ".join(f"{k} {v}" for k, v in lines.items()))


def endings_job(job_id: str, variant: str, logged: bool) -> Job:
    label = "with --enable-log-requests" if logged else "on a server started without --enable-log-requests"
    claims = [
        Claim(f"{job_id}.stop-and-length-counted", f"Requests that end with stop or length each add one to "
              f"vllm:request_success_total under their finished_reason, and one e2e latency observation ({label}).",
              decide_counted),
        Claim(f"{job_id}.abort-counted", f"A client that disconnects mid-stream is counted in "
              f"vllm:request_success_total under finished_reason abort ({label}).", decide_abort),
    ]
    if logged:
        claims += [
            Claim(f"{job_id}.rejected-before-engine", "A prompt longer than the context is refused with HTTP 400 "
                  "before it reaches the engine: no engine metric moves, only the HTTP counters.", decide_rejected),
            Claim(f"{job_id}.log-lines", "With --enable-log-requests, the log has one 'Added request' line for each "
                  "request the engine accepted and names each abort; a request refused before the engine is not "
                  "logged as added.", decide_logged),
        ]
    else:
        claims.append(Claim(f"{job_id}.silent-log", "Without --enable-log-requests, no ending (stop, length, a "
                            "client disconnecting, a refused prompt) writes a request-level log line.", decide_silent))
    return Job(
        id=job_id,
        title=f"How a request ends, {label}",
        question="How does each way a request can end show in the metrics and in the log?",
        pages=("lifecycle.md", "openai-server.md"),
        variant=variant,
        collect=collect,
        claims=tuple(claims),
    )
