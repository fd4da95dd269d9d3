"""SIGTERM with streams in flight: what the streams, a new request and the probes get until exit.

The job launches its own server (with the given --shutdown-timeout, or none: vLLM's default) and
nginx in front of it (the streaming article's nginx-streaming set-up), waits until the server
answers, starts one stream of stream_tokens tokens (STREAM_TOKENS unless the job gives its own)
directly and one through nginx, waits until the server has generated tokens for both (its
generation-token counter up by IN_FLIGHT_TOKENS, at most GENERATING_LIMIT_S), and IN_FLIGHT_S later
sends SIGTERM to the API server process (what Kubernetes sends to a container's first process).
Until the process exits, /health and /v1/models are polled every POLL_S (directly, and /health through nginx too) and /metrics read once;
NEW_REQUEST_AFTER_S after the signal one new completion is sent directly and one through nginx.
"""

from __future__ import annotations

PROXY = "nginx-streaming"
PATHS = ("direct", "nginx")
STREAM_TOKENS = 160
IN_FLIGHT_S = 1.0
# A fixed pause is not enough: vLLM 0.27.0 on an AVX2-only CPU sent no token to either stream in the 2 s
# after they were sent, so a stream was not yet "in flight" at the signal.
IN_FLIGHT_TOKENS = 2 * 4
GENERATING_LIMIT_S = 60.0
POLL_S = 0.2
NEW_REQUEST_AFTER_S = 0.15
NEW_REQUEST_TOKENS = 8
# The streams' client gives up after read_timeout_s with no byte (default STREAM_READ_TIMEOUT_S); the
# job waits for the process to exit at most EXIT_LIMIT_S after SIGTERM, longer than any timeout, so an
# exit that waits for the clients to leave is seen.
STREAM_READ_TIMEOUT_S = 15.0
EXIT_LIMIT_S = 45.0


def drain(ctx, shutdown_timeout_s: int | None, read_timeout_s: float = STREAM_READ_TIMEOUT_S,
          stream_tokens: int = STREAM_TOKENS) -> dict:
    import os
    import signal
    import time

    import httpx

    from verify.jobs.health import _watch
    from verify.measure import capture
    look = ctx.snippet(_watch.SNIPPET)
    flags = ("--shutdown-timeout", str(shutdown_timeout_s)) if shutdown_timeout_s is not None else ()
    data: dict = {"shutdown_timeout_flag": list(flags), "stream_tokens": stream_tokens, "proxy": PROXY,
                  "read_timeout_s": read_timeout_s}
    with ctx.launch(flags) as srv:
        polls, ready_s = _watch.wait_ready(ctx, srv, look)
        data["startup"] = capture.results("startup-polls", polls, polls=polls, ready_s=ready_s,
                                          error=None if ready_s is not None else "the server never answered 200 on all three")
        if ready_s is None:
            return data
        body = {"model": _watch.MODEL, "prompt": "Write a long story about a lighthouse.",
                "max_tokens": stream_tokens, "ignore_eos": True, "stream": True,
                "stream_options": {"include_usage": True}}
        new_body = {"model": _watch.MODEL, "prompt": "Hi", "max_tokens": NEW_REQUEST_TOKENS}
        with ctx.proxy(PROXY, srv.port) as proxy, httpx.Client(base_url=srv.url, timeout=10.0) as direct, \
                httpx.Client(base_url=proxy.url, timeout=10.0) as via:
            # Two requests at once first, one each way: an engine's first requests can be slow (vLLM 0.27.0
            # answered its first completions seconds late, and on an AVX2-only CPU its first batch of two
            # stalled past a 3 s read timeout), and the streams must be generating at the signal.
            from concurrent.futures import ThreadPoolExecutor
            with httpx.Client(base_url=srv.url, timeout=60.0) as a, httpx.Client(base_url=proxy.url, timeout=60.0) as b, \
                    ThreadPoolExecutor(2) as pool:
                data["warm_up"], data["warm_up_nginx"] = pool.map(lambda c: _watch.answer_of(c, new_body), (a, b))
            before = _watch.gauges(direct)
            streams = [_watch.stream_in_background(base + "/v1/completions", body, read_timeout_s)
                       for base in (srv.url, proxy.url)]
            data["generating"] = wait_generating(direct, IN_FLIGHT_TOKENS, GENERATING_LIMIT_S)
            time.sleep(IN_FLIGHT_S)
            os.kill(srv.process.pid, signal.SIGTERM)
            t0 = time.monotonic()
            drain_polls, new_requests, during = [], {}, None
            while srv.process.poll() is None and time.monotonic() - t0 < EXIT_LIMIT_S:
                t = round(time.monotonic() - t0, 3)
                drain_polls.append({"t": t, "health": _watch.status_of(direct, "GET", "/health"),
                                    "models": _watch.status_of(direct, "GET", "/v1/models"),
                                    "health_nginx": _watch.status_of(via, "GET", "/health")})
                if not new_requests and t >= NEW_REQUEST_AFTER_S:  # (the first poll comes before the signal acts)
                    for path, client in zip(PATHS, (direct, via)):
                        new_requests[path] = {"t": round(time.monotonic() - t0, 3), **_watch.answer_of(client, new_body)}
                if during is None and t >= 1.0:
                    during = {"t": t, "metrics": _watch.gauges(direct)}
                time.sleep(POLL_S)
            exit_s = round(time.monotonic() - t0, 3) if srv.process.poll() is not None else None
            ended = []
            for path, stream in zip(PATHS, streams):
                captured, began = stream()
                # A stream the shutdown ends without a finish is what the job watches for, so an error
                # (a client timeout) is expected; a stream that received nothing still fails.
                # offset_s: when the stream was sent, in seconds after SIGTERM (negative).
                ended.append({"path": path, "offset_s": round(began - t0, 3),
                              "stream": {**captured, "expect_error": True}})
    data["drain"] = capture.results("drain-polls", drain_polls, polls=drain_polls, streams=ended,
                                    new_requests=new_requests or None, metrics_before=before, metrics_during=during,
                                    exit_s=exit_s, server_exit_code=srv.process.poll())
    return data


def generated_tokens(client) -> float | None:
    """vllm:generation_tokens_total from /metrics (None: not readable)."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families
    try:
        r = client.get("/metrics")
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    return sum(s.value for family in text_string_to_metric_families(r.text) for s in family.samples
               if s.name == "vllm:generation_tokens_total")


def wait_generating(client, tokens: int, limit_s: float) -> dict:
    """Wait until the server's generation-token counter has risen by tokens (from its first reading),
    so that streams just sent are generating; how long that took, or that it did not within limit_s."""
    import time
    t0, first = time.monotonic(), generated_tokens(client)
    while time.monotonic() - t0 < limit_s:
        now = generated_tokens(client)
        if first is not None and now is not None and now - first >= tokens:
            return {"after_s": round(time.monotonic() - t0, 3), "tokens": now - first}
        time.sleep(0.05)
    return {"after_s": None, "limit_s": limit_s}


def after_signal(stream: dict, stream_s: float | None) -> float | None:
    """A time of the stream (s after it was sent) as seconds after SIGTERM."""
    return None if stream_s is None else round(stream_s + stream["offset_s"], 3)


def streams(d) -> list[dict]:
    """Each stream's path, its offset from SIGTERM and what its raw capture delivered (_watch.tokens_and_end)."""
    from verify.jobs.health._watch import tokens_and_end
    return [{"path": s["path"], "offset_s": s["offset_s"], **tokens_and_end(s["stream"])} for s in d["drain"]["streams"]]


PATHS = ("direct", "nginx")  # one stream each way, as the jobs send them


def streams_missing(d) -> str | None:
    """Why the streams cannot decide a claim about streams in flight: one of the two the job sends is not
    in the record (an empty list would make every "all streams" rule pass on nothing)."""
    got = sorted(s["path"] for s in d["drain"]["streams"] or ())
    return None if got == sorted(PATHS) else f"the record holds streams {got}, not one each way {list(PATHS)}"


def streams_line(d) -> str:
    return "; ".join(f"stream {s['path']}: {s['chunks']} text chunks, the last {after_signal(s, s['last_text_s'])} s "
                     f"after SIGTERM; usage {s['tokens']} of {d['stream_tokens']} tokens, finish reason "
                     f"{s['finish_reason']}, {len(s['errors'])} error event(s), [DONE] "
                     f"{'sent' if s['done'] else 'not sent'}, ended {after_signal(s, s['ended_s'])} s after SIGTERM"
                     + (f" by the client's {d['read_timeout_s']:.0f} s read timeout ({s['client_error']})"
                        if s["client_error"] else "")
                     for s in streams(d))


def new_request(d, path: str) -> dict | None:
    return (d["drain"]["new_requests"] or {}).get(path)


def request_line(r: dict | None, path: str) -> str:
    if r is None:
        return f"no completion was sent {path}: the server had exited"
    return (f"a completion sent {path} {r['t']:.2f} s after SIGTERM got {r['status']}"
            + (f", finish reason {r.get('finish_reason')}" if r.get("finish_reason") else "")
            + (f": {r['error']}" if r.get("error") else ""))
