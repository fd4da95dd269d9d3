"""What /health, /v1/models and a completion answer from process start to engine death.

One server, launched by the job and watched from the moment its process is spawned:
1. start-up: the page's snippet (health/look.py) polls the port, /health, /v1/models and a
   one-token completion every POLL_S until all three answer 200;
2. a stalled engine: the engine core process is stopped (SIGSTOP) for STALL_S while the API server
   lives; /health is polled, a stream is started and /metrics read during the stall, then the engine
   is continued (SIGCONT) and a completion sent;
3. a dead engine: with a stream in flight, the engine core is killed (SIGKILL); /health is polled
   and a completion sent until the API server exits by itself, or DEATH_LIMIT_S passes.
Every process of the server is stopped when the job ends, whatever state it left them in.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

STALL_S = 6.0  # how long the engine stays stopped
STALL_STREAM_TIMEOUT_S = 4.0  # the client's read timeout for the stream sent during the stall
DEATH_LIMIT_S = 60.0  # how long the job waits for the API server to exit after the engine died
STREAM_TOKENS = 400  # long enough to be in flight when the engine dies
IN_FLIGHT_S = 1.5  # how long the stream runs before the engine is killed
DEAD_HEALTH_WITHIN_S = 2.0  # the claim: /health answers 503 this soon after the engine died
EXIT_WITHIN_S = 30.0  # the claim: the API server exits by itself this soon after the engine died
# /health's 503 lasts from the API server seeing the engine die to its port closing, a fraction of a
# second: polled every 0.2 s it was caught by one poll in some records and missed in another.
DEATH_POLL_S = 0.02


def collect(ctx) -> dict:
    import httpx

    from verify.jobs.health import _watch
    from verify.measure import capture
    look = ctx.snippet(_watch.SNIPPET)
    data: dict = {"poll_s": _watch.POLL_S, "stall_s": STALL_S}
    with ctx.launch() as srv:
        polls, ready_s = _watch.wait_ready(ctx, srv, look)
        data["startup"] = capture.results("startup-polls", polls, polls=polls, ready_s=ready_s,
                                          error=None if ready_s is not None else "the server never answered 200 on all three")
        if ready_s is None:
            return data
        core = _watch.engine_core(srv.process.pid)
        if core is None:
            data["stall"] = capture.results("stall", [], error="no engine core process found under the API server")
            return data
        data["engine_core_name"] = core.name()
        with httpx.Client(base_url=srv.url, timeout=3.0) as client:
            data["stall"] = _stall(client, srv, core, _watch)
            data["death"] = _death(client, srv, core, _watch)
    return data


def _stall(client, srv, core, _watch) -> dict:
    import signal
    import time

    from verify.measure import capture
    before = _watch.gauges(client)
    body = {"model": _watch.MODEL, "prompt": "Count from one to fifty:", "max_tokens": 16, "stream": True}
    polls = []
    core.send_signal(signal.SIGSTOP)
    t0 = time.monotonic()
    try:
        stream = _watch.stream_in_background(srv.url + "/v1/completions", body, STALL_STREAM_TIMEOUT_S)
        during = None
        while time.monotonic() - t0 < STALL_S:
            polls.append({"t": round(time.monotonic() - t0, 3), "health": _watch.status_of(client, "GET", "/health")})
            if during is None and time.monotonic() - t0 > 1.0:
                during = _watch.gauges(client)  # a request is now in the API server, the engine stopped
            time.sleep(0.5)
        stalled = stream()[0]
    finally:
        core.send_signal(signal.SIGCONT)
    resumed_at = time.monotonic()
    after = _watch.answer_of(client, {"model": _watch.MODEL, "prompt": "Hi", "max_tokens": 4})
    # The stalled stream's raw answer (status, headers, no line) is an observation of the stall, not a
    # capture of its own: receiving nothing is what the job expects of it.
    stalled = {k: v for k, v in stalled.items() if k != "capture"}
    return capture.results("stall-polls", polls, polls=polls, metrics_before=before, metrics_during=during,
                           stream_during=stalled, after_continue=after,
                           after_continue_s=round(time.monotonic() - resumed_at, 3))


def _death(client, srv, core, _watch) -> dict:
    import signal
    import time

    from verify.measure import capture
    body = {"model": _watch.MODEL, "prompt": "Write a long story about a lighthouse.", "max_tokens": STREAM_TOKENS,
            "stream": True, "ignore_eos": True}
    stream = _watch.stream_in_background(srv.url + "/v1/completions", body, DEATH_LIMIT_S)
    time.sleep(IN_FLIGHT_S)
    core.send_signal(signal.SIGKILL)
    t0 = time.monotonic()
    polls, request = [], None
    while srv.process.poll() is None and time.monotonic() - t0 < DEATH_LIMIT_S:
        polls.append({"t": round(time.monotonic() - t0, 3), "health": _watch.status_of(client, "GET", "/health")})
        if request is None and polls[-1]["health"] == 503:
            request = {"t": round(time.monotonic() - t0, 3),
                       **_watch.answer_of(client, {"model": _watch.MODEL, "prompt": "Hi", "max_tokens": 4})}
        time.sleep(DEATH_POLL_S)
    exit_s = round(time.monotonic() - t0, 3) if srv.process.poll() is not None else None
    return capture.results("death-polls", polls, polls=polls, stream=stream()[0], request_after=request,
                           exit_s=exit_s, server_exit_code=srv.process.poll())


def decide_refused_while_loading(d):
    """Every poll before /health first answered found the port refusing connections: no HTTP status at all."""
    polls = d["startup"]["polls"]
    first = next((p["t"] for p in polls if isinstance(p.get("health"), int)), None)
    if first is None:
        return verdict_if(None, "/health never answered during start-up")
    early = [p for p in polls if p["t"] < first]
    refused = [p for p in early if p["port"] == "ConnectionRefusedError"]
    if len(early) < 3:
        return verdict_if(None, f"only {len(early)} polls before /health answered: too few to show the start-up")
    return verdict_if(len(refused) == len(early),
                      f"{len(refused)} of the {len(early)} polls before /health first answered ({early[0]['t']:.2f} "
                      f"to {early[-1]['t']:.2f} s after spawn) found the port refusing connections; /health "
                      f"answered at {first:.2f} s")


def decide_ready_together(d):
    """/health, /v1/models and a completion answered 200 first in one and the same poll."""
    start = d["startup"]
    first = {k: next((p["t"] for p in start["polls"] if p.get(k) == 200), None) for k in ("health", "models", "completion")}
    if None in first.values():
        return verdict_if(None, f"not every endpoint answered 200 during start-up: {first}")
    return verdict_if(len(set(first.values())) == 1,
                      "first 200, seconds after spawn: " + ", ".join(f"{k} {v:.2f}" for k, v in first.items()))


def decide_no_loading_status(d):
    """No poll during start-up got any HTTP status but 200 from /health (no 503 while loading)."""
    start = d["startup"]
    answered = [p["health"] for p in start["polls"] if isinstance(p.get("health"), int)]
    if not answered:
        return verdict_if(None, "/health never answered during start-up")
    others = sorted({s for s in answered if s != 200})
    return verdict_if(not others, f"/health answered {len(answered)} times during start-up: "
                                  + (f"statuses other than 200: {others}" if others else "200 every time"))


def _stop_unseen(d) -> str | None:
    """Why the record does not show the engine stopped (None when it does): the stream sent during the stall
    was accepted and got no text until its client's timeout, and the completion after SIGCONT got tokens.
    Without that, a SIGSTOP that did not take would pass for a stall that /health and /metrics miss."""
    from verify.jobs.health._watch import tokens_and_end
    s = tokens_and_end(d["stall"]["stream_during"])
    after = d["stall"]["after_continue"]
    if s["status"] != 200 or s["chunks"] or "Timeout" not in str(s["client_error"]):
        return (f"the stream sent during the stall does not show a stopped engine (HTTP {s['status']}, "
                f"{s['chunks']} text chunks, ended by {s['client_error']})")
    if after.get("status") != 200 or not after.get("tokens"):
        return f"after SIGCONT a completion got {after.get('status')}: the engine did not come back"
    return None


def decide_stall_health(d):
    polls = d["stall"]["polls"]
    statuses = [p["health"] for p in polls]
    if why := _stop_unseen(d):
        return verdict_if(None, why)
    if len(polls) < 3:
        return verdict_if(None, f"only {len(polls)} /health polls during the stall")
    return verdict_if(statuses.count(200) == len(statuses),
                      f"engine core stopped for {d['stall_s']:.0f} s: /health answered {statuses}")


def decide_stall_request(d):
    from verify.jobs.health._watch import tokens_and_end
    s = tokens_and_end(d["stall"]["stream_during"])
    after = d["stall"]["after_continue"]
    if after.get("status") != 200:
        return verdict_if(None, f"after SIGCONT a completion got {after.get('status')}: the engine did not come back, "
                                "so the stall cannot be told from a failure")
    return verdict_if(s["chunks"] == 0 and s["finish_reason"] is None and bool(s["client_error"])
                      and "Timeout" in str(s["client_error"]),
                      f"a stream sent while the engine was stopped: HTTP {s['status']}, {s['chunks']} text chunks, "
                      f"ended by the client's {STALL_STREAM_TIMEOUT_S:.0f} s timeout ({s['client_error']})")


def decide_stall_metrics_blind(d):
    before, during = d["stall"]["metrics_before"], d["stall"]["metrics_during"]
    if not isinstance(before, dict) or not isinstance(during, dict):
        return verdict_if(None, f"/metrics was not read on both sides: before {before!r}, during {during!r}")
    keys = ("vllm:num_requests_running", "vllm:num_requests_waiting")
    if any(k not in before or k not in during for k in keys):
        return verdict_if(None, "a request gauge is missing from /metrics")
    if why := _stop_unseen(d):
        return verdict_if(None, why)
    same = all(before[k] == during[k] for k in keys)
    return verdict_if(same, "running/waiting requests before the stall "
                            f"{before[keys[0]]:.0f}/{before[keys[1]]:.0f}, during it with a stream in flight "
                            f"{during[keys[0]]:.0f}/{during[keys[1]]:.0f}")


def decide_stall_recovers(d):
    after = d["stall"]["after_continue"]
    from verify.jobs.health._watch import tokens_and_end
    s = tokens_and_end(d["stall"]["stream_during"])
    if s["chunks"] or "Timeout" not in str(s["client_error"]):
        return verdict_if(None, f"the stream sent during the stall got {s['chunks']} text chunks and ended by "
                                f"{s['client_error']}: the record does not show the engine stopped")
    return verdict_if(after.get("status") == 200 and (after.get("tokens") or 0) > 0,
                      f"after SIGCONT a completion got HTTP {after.get('status')} with {after.get('tokens')} tokens "
                      f"in {d['stall']['after_continue_s']:.2f} s")


def _first_503(death) -> float | None:
    return next((p["t"] for p in death["polls"] if p["health"] == 503), None)


def decide_dead_health(d):
    death = d["death"]
    first = _first_503(death)
    before = [p["health"] for p in death["polls"] if first is None or p["t"] < first]
    if not death["polls"]:
        return verdict_if(None, "/health was not polled after the engine died")
    return verdict_if(first is not None and first <= DEAD_HEALTH_WITHIN_S,
                      f"after SIGKILL of the engine core, /health answered {before} then "
                      + (f"503 at {first:.2f} s" if first is not None else "never 503"))


def decide_dead_request(d):
    r, first = d["death"]["request_after"], _first_503(d["death"])
    if r is None or first is None or r["t"] < first:
        return verdict_if(None, "no completion was sent after /health answered 503")
    return verdict_if(isinstance(r["status"], int) and r["status"] >= 500,
                      f"a completion sent once /health answered 503 got {r['status']}"
                      + (f": {r['error']}" if r.get("error") else ""))


def decide_dead_stream(d):
    from verify.jobs.health._watch import tokens_and_end
    s = tokens_and_end(d["death"]["stream"])
    if s["chunks"] == 0:
        return verdict_if(None, "the stream had received no text before the engine died, so it was not in flight")
    return verdict_if(bool(s["errors"]) and s["done"] and s["chunks"] < STREAM_TOKENS and s["finish_reason"] is None,
                      f"the stream in flight got {s['chunks']} text chunks of {STREAM_TOKENS}, "
                      f"{len(s['errors'])} error event(s)"
                      + (f" ({s['errors'][0].get('message', s['errors'][0]) if isinstance(s['errors'][0], dict) else s['errors'][0]})"
                         if s["errors"] else "")
                      + f", [DONE] {'sent' if s['done'] else 'not sent'}; client error: {s['client_error']}")


def decide_dead_exits(d):
    death = d["death"]
    if death["exit_s"] is None:
        return verdict_if(False, f"the API server was still running {DEATH_LIMIT_S:.0f} s after the engine core "
                                 "was killed")
    return verdict_if(death["exit_s"] <= EXIT_WITHIN_S,
                      f"the API server exited {death['exit_s']} s after the engine core was killed")


def decide_dead_exit_code(d):
    death = d["death"]
    if death["exit_s"] is None:
        return verdict_if(None, "the API server did not exit while the job waited, so it has no exit code")
    return verdict_if(death["server_exit_code"] == 0, f"exit code {death['server_exit_code']} after the engine core was killed")


JOB = Job(
    id="health-probes",
    title="What the probes see from start-up to a stalled and a dead engine",
    question="What do the port, /health, /v1/models and a completion answer while vLLM loads, while its engine "
             "is stopped, and after its engine dies?",
    pages=("health.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # the job launches, stops and kills a server of its own
    collect=collect,
    claims=(
        Claim("health-probes.refused-while-loading", "While the model loads, until /health first answers, the "
              "port refuses connections: a probe gets no HTTP status at all, not a 503.",
              decide_refused_while_loading),
        Claim("health-probes.no-loading-status", "/health has no 'loading' answer: the first status it ever "
              "gives is 200.", decide_no_loading_status),
        Claim("health-probes.ready-together", "/health, /v1/models and a completion start answering 200 in the "
              "same poll.", decide_ready_together),
        Claim("health-probes.stall-health-200", "With the engine core process stopped, /health keeps answering "
              "200.", decide_stall_health),
        Claim("health-probes.stall-request-hangs", "A request sent to a stopped engine gets no tokens and no "
              "error: only the client's timeout ends it.", decide_stall_request),
        Claim("health-probes.stall-metrics-blind", "/metrics does not show a stopped engine: its request gauges "
              "stay where they were with a request in flight.", decide_stall_metrics_blind),
        Claim("health-probes.stall-recovers", "Once the engine core continues, the same server answers again, "
              "with no restart.", decide_stall_recovers),
        Claim("health-probes.dead-health-503", "Once the engine core dies, /health answers 503 within "
              f"{DEAD_HEALTH_WITHIN_S:.0f} s.", decide_dead_health, timing=True),
        Claim("health-probes.dead-request-5xx", "Once /health answers 503, a new request gets a 5xx status "
              "at once.", decide_dead_request),
        Claim("health-probes.dead-stream-error", "A stream in flight when the engine dies ends with an error "
              "event and [DONE], not a finish reason.", decide_dead_stream),
        Claim("health-probes.dead-exits", "After the engine dies, the API server exits by itself, within "
              f"{EXIT_WITHIN_S:.0f} s.", decide_dead_exits, timing=True),
        Claim("health-probes.dead-exit-code-zero", "It exits with code 0, as from a clean shutdown.",
              decide_dead_exit_code),
    ),
)
