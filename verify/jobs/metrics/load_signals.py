"""Which signal moves first under a load that rises past what the server runs at once, and the page's alert.

A server that runs at most four requests at once (--max-num-seqs 4) is scraped
every second by a real Prometheus with the page's configuration, recording rules
and alert rules (evaluated every second). First a quiet stretch (REST_S, 5 s); then closed-loop
clients, 1, 4, 8 and 12 of them, each level held STEP_S, the last only until the alert fires;
then quiet again until the alert has resolved. Prometheus' own API gives the alerts' state
(polled every second) and afterwards the series, one point a second.
"""

from __future__ import annotations

from verify.job import Claim, Job, Verdict, INCONCLUSIVE, REFUTED, verdict_if

MAX_NUM_SEQS = 4
# Clients at once: one (the TTFT baseline), the limit (nothing waits yet), then past it long enough
# for the alert's 20 s `for:` to fire.
LEVELS = (1, 4, 8, 12)
STEP_S = 15.0
# The quiet stretch before the load. The alert goes pending at the first rule evaluation (one a second) that
# finds a request waiting, with no `for:` before that, so a few evaluations of the idle server show whether it
# is silent at rest; no rest shorter than the rule's 20 s could show it firing anyway, and the rules' baseline
# does not read the rest. It also leaves scrapes of the idle server in the TTFT rate window before the first request.
REST_S = 5.0
# Fewer reads of the alerts at rest than this cannot show the alert silent on an idle server.
MIN_REST_READS = 3
RESOLVE_WITHIN_S = 30.0
PROMPT_TOKENS, MAX_TOKENS = 100, 48
SCRAPE_S = 1.0
ALERT, ALERT_FOR_S = "VLLMRequestsWaiting", 20.0
# "TTFT p95 moved": twice its median over the first level (one client).
MOVED_FACTOR = 2.0
# "The queue shows the limit": requests waiting within this long of the clients passing it.
WAIT_SHOWS_WITHIN_S = 5.0
# "KV cache usage stays low": below this fraction while requests wait.
KV_LOW_BELOW = 0.1
CONFIG, RULES = "metrics/prometheus.yml", ("metrics/recording-rules.yml", "metrics/alert-rules.yml")
SERIES = {
    "running": "sum(vllm:num_requests_running)",
    "waiting": "sum(vllm:num_requests_waiting)",
    "kv_usage": "max(vllm:kv_cache_usage_perc)",
    "ttft_p95": "max(model_name:vllm_time_to_first_token_seconds:p95_1m)",
    "e2e_p95": "max(model_name:vllm_e2e_request_latency_seconds:p95_1m)",
}


def collect(ctx) -> dict:
    import threading
    import time

    import httpx

    from verify.live.prometheus import managed_prometheus, wait_for
    from verify.measure import capture, metrics
    from verify.measure.prompts import exact_prompt
    target = ctx.server.url.split("://", 1)[1]
    with httpx.Client(timeout=120) as client:
        prompt = exact_prompt(ctx.server.url, client, PROMPT_TOKENS)
        info = next(k for k in metrics.read_all(ctx.server.url) if k.startswith("vllm:cache_config_info"))
        num_blocks = int(info.split('num_gpu_blocks="')[1].split('"')[0])
    requests: list[dict] = []
    level = {"n": 0}
    lock = threading.Lock()

    def client_loop(i: int, t0: float, stop: threading.Event):
        with httpx.Client(timeout=300) as c:
            while not stop.is_set():
                if i >= level["n"]:
                    time.sleep(0.05)
                    continue
                body = {"model": "chat", "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0,
                        "ignore_eos": True}
                start = time.time() - t0
                try:
                    r = c.post(ctx.base_url + "/completions", json=body)
                    got = capture.response(r, client=i, started_s=round(start, 3), ended_s=round(time.time() - t0, 3))
                except httpx.HTTPError as e:
                    got = capture.no_response("request", e, client=i, started_s=round(start, 3))
                with lock:
                    requests.append(got)

    alerts: list[dict] = []
    with managed_prometheus(target, SCRAPE_S, SCRAPE_S, config_path=ctx.snippet_path(CONFIG),
                            rule_paths=tuple(ctx.snippet_path(r) for r in RULES)) as prom:
        metrics.wait_idle(ctx.server.url)
        up = wait_for(prom.targets_up, 30)
        t0 = time.time()

        def poll_alerts_until(t_until: float, done=lambda: False):
            while time.time() - t0 < t_until and not done():
                alerts.append({"t": round(time.time() - t0, 2),
                               "alerts": [{"name": a["labels"].get("alertname"), "state": a["state"]}
                                          for a in prom.alerts()]})
                time.sleep(SCRAPE_S)

        stop = threading.Event()
        clients = [threading.Thread(target=client_loop, args=(i, t0, stop), daemon=True) for i in range(max(LEVELS))]
        for c in clients:
            c.start()
        poll_alerts_until(REST_S)
        steps = []
        def firing():
            return bool(alerts) and any(a["name"] == ALERT and a["state"] == "firing" for a in alerts[-1]["alerts"])
        for k, n in enumerate(LEVELS):
            level["n"] = n
            steps.append({"clients": n, "start_s": round(time.time() - t0, 2)})
            # The last level has done its part once the alert fires: nothing after that is read before the drain.
            poll_alerts_until(REST_S + (k + 1) * STEP_S, firing if k == len(LEVELS) - 1 else lambda: False)
        level["n"] = 0
        load_end = round(time.time() - t0, 2)
        stop.set()
        for c in clients:
            c.join(timeout=300)
        drained = round(time.time() - t0, 2)

        def resolved():
            return bool(alerts) and not any(a["name"] == ALERT for a in alerts[-1]["alerts"])
        poll_alerts_until(drained + RESOLVE_WITHIN_S + 5, resolved)
        t_end = time.time()
        series = {name: [(round(float(t) - t0, 2), float(v)) for t, v in (r[0]["values"] if r else [])]
                  for name, expr in SERIES.items()
                  for r in [prom.query_range(expr, t0, t_end, SCRAPE_S)]}
    return {"num_blocks": num_blocks, "steps": steps, "load_end_s": load_end, "drained_s": drained,
            "requests": requests,
            "alerts": capture.results("alerts", alerts, polls=alerts, error=None if up else
                                      "Prometheus never reported the server's target up"),
            "series": capture.results("query", series.get("running", []), series=series)}


def _series(d, name) -> list[tuple[float, float]]:
    points = d["series"]["series"][name]
    if not points:
        raise ValueError(f"Prometheus returned no {name} series")
    return points


def _first(points, test) -> float | None:
    return next((t for t, v in points if test(v)), None)


def alert_states(d, t_from=None, t_to=None) -> list[tuple[float, str]]:
    return [(p["t"], a["state"]) for p in d["alerts"]["polls"] if (t_from is None or p["t"] >= t_from)
            and (t_to is None or p["t"] < t_to) for a in p["alerts"] if a["name"] == ALERT]


def _failed_requests(d) -> int:
    return sum(1 for r in d["requests"] if r.get("status") != 200)


def decide_running_capped(d):
    running, waiting = _series(d, "running"), _series(d, "waiting")
    most, queued = max(v for _, v in running), max(v for _, v in waiting)
    return verdict_if(most == MAX_NUM_SEQS and queued > 0,
                      f"with up to {max(LEVELS)} clients: at most {most:.0f} requests running "
                      f"(--max-num-seqs {MAX_NUM_SEQS}), up to {queued:.0f} waiting; {len(d['requests'])} requests, "
                      f"{_failed_requests(d)} failed")


def _first_past_limit(d) -> dict:
    return next(st for st in d["steps"] if st["clients"] > MAX_NUM_SEQS)


def decide_waiting_past_limit(d):
    waiting, past = _series(d, "waiting"), _first_past_limit(d)
    early = [(t, v) for t, v in waiting if t < past["start_s"] and v > 0]
    t_wait = _first(waiting, lambda v: v > 0)
    if early:
        return Verdict(REFUTED, f"{early[0][1]:.0f} requests waiting at {early[0][0]} s, before the clients "
                                  f"passed {MAX_NUM_SEQS} (at {past['start_s']} s)")
    return verdict_if(t_wait is not None and t_wait - past["start_s"] <= WAIT_SHOWS_WITHIN_S,
                      f"no request waiting while the clients were {MAX_NUM_SEQS} or fewer; the clients went to "
                      f"{past['clients']} at {past['start_s']} s, requests first waiting at {t_wait} s")


def decide_ttft_moves_with_queue(d):
    """Read on both sides of the queue: the highest p95 while every client had a slot (the levels after the
    first, before the clients passed the limit) against the highest once requests waited. A p95 that had
    already climbed before anything waited would not be the queue's doing."""
    ttft, past = _series(d, "ttft_p95"), _first_past_limit(d)
    first_step = d["steps"][0]["start_s"], d["steps"][1]["start_s"]
    base = sorted(v for t, v in ttft if first_step[0] + 5 <= t < first_step[1] and v == v)
    slotted = [v for t, v in ttft if first_step[1] <= t < past["start_s"] and v == v]
    queued = [v for t, v in ttft if past["start_s"] <= t <= d["load_end_s"] and v == v]
    if not base or not slotted or not queued:
        return Verdict(INCONCLUSIVE, "no TTFT p95 during the first level, while every client had a slot, or once "
                                     "requests waited")
    baseline = base[len(base) // 2]
    return verdict_if(max(queued) > MOVED_FACTOR * max(slotted),
                      f"TTFT p95 (1 min window): {baseline * 1000:.0f} ms with one client (median), at most "
                      f"{max(slotted) * 1000:.0f} ms while every client had a slot, up to "
                      f"{max(queued) * 1000:.0f} ms once the clients passed {MAX_NUM_SEQS}; "
                      f"threshold {MOVED_FACTOR:g} x the highest before anything waited")


def decide_kv_quiet(d):
    waiting, kv = dict(_series(d, "waiting")), _series(d, "kv_usage")
    while_waiting = [v for t, v in kv if waiting.get(t, 0) > 0]
    if not while_waiting:
        return Verdict(INCONCLUSIVE, "no request waited, so there is nothing to compare")
    # Over the usable blocks (the engine keeps one aside), as kv-fraction reads them.
    usable = d["num_blocks"] - 1
    return verdict_if(max(while_waiting) < KV_LOW_BELOW,
                      f"KV cache usage while requests waited: at most {max(while_waiting):.3f} "
                      f"({round(max(while_waiting) * usable)} of the {usable} usable blocks); "
                      f"threshold {KV_LOW_BELOW}")


def decide_kv_fraction(d):
    kv = [v for _, v in _series(d, "kv_usage")]
    # The engine keeps one block aside (the null block), so usage may be over the blocks less one.
    usable = next((n for n in (d["num_blocks"], d["num_blocks"] - 1)
                   if all(abs(v * n - round(v * n)) < 1e-3 for v in kv)), None)
    return verdict_if(usable is not None and 0 < max(kv) <= 1,
                      f"{len(kv)} readings from 0 to {max(kv):.4f}; " +
                      (f"each is a whole number of blocks over {usable} (at most {round(max(kv) * usable)})"
                       if usable else f"no reading is a whole number of blocks over {d['num_blocks']} or "
                                      f"{d['num_blocks'] - 1}"))


def decide_alert_silent_at_rest(d):
    polls = [p for p in d["alerts"]["polls"] if p["t"] < d["steps"][0]["start_s"]]
    if len(polls) < MIN_REST_READS:
        return Verdict(INCONCLUSIVE, f"the alerts were read {len(polls)} times at rest, fewer than "
                                     f"{MIN_REST_READS}: too few rule evaluations to show the alert silent")
    states = alert_states(d, t_to=d["steps"][0]["start_s"])
    return verdict_if(not states, f"{len(polls)} reads of /api/v1/alerts at rest: "
                      + (f"{ALERT} {states[0][1]} at {states[0][0]} s" if states else f"{ALERT} never pending or firing"))


def decide_alert_fires(d):
    t_wait = _first(_series(d, "waiting"), lambda v: v > 0)
    firing = [t for t, s in alert_states(d) if s == "firing"]
    if t_wait is None:
        return Verdict(INCONCLUSIVE, "no request waited under the load")
    return verdict_if(bool(firing) and firing[0] >= t_wait + ALERT_FOR_S - 2 * SCRAPE_S,
                      f"requests first waiting at {t_wait} s; {ALERT} " +
                      (f"firing from {firing[0]} s ('for: {ALERT_FOR_S:.0f}s')" if firing else "never fired"))


def decide_alert_resolves(d):
    """When the alert resolved is known only between two reads of Prometheus' alerts: the last that lists it
    and the first after that does not. No read falls while the last requests drain, so that span is seconds
    wide; both its ends must lie within RESOLVE_WITHIN_S of the last request ending."""
    polls, drained = d["alerts"]["polls"], d["drained_s"]
    listed = [i for i, p in enumerate(polls) if any(a["name"] == ALERT for a in p["alerts"])]
    firing = [t for t, state in alert_states(d) if state == "firing"]
    if not firing:
        return Verdict(INCONCLUSIVE, f"{ALERT} never fired in {len(polls)} reads of /api/v1/alerts, so there was "
                                     "nothing to resolve")
    last = polls[listed[-1]]
    state = next(a["state"] for a in last["alerts"] if a["name"] == ALERT)
    because = (f"load ended at {d['load_end_s']} s, last request done at {drained} s; {ALERT} firing from "
               f"{firing[0]} s, last listed ({state}) at {last['t']} s, ")
    if listed[-1] + 1 == len(polls):
        return Verdict(REFUTED, because + f"still listed at the last read, {last['t'] - drained:.1f} s after the last "
                                          "request")
    gone = polls[listed[-1] + 1]["t"]
    because += (f"gone at {gone} s: it resolved between {last['t'] - drained:+.1f} s and {gone - drained:+.1f} s "
                f"from the last request's end (the reads {gone - last['t']:.1f} s apart there); "
                f"bound {RESOLVE_WITHIN_S:g} s")
    if state != "firing":
        return Verdict(INCONCLUSIVE, because + " (it left pending, not firing: that is no resolution)")
    return verdict_if(last["t"] >= drained - RESOLVE_WITHIN_S and gone <= drained + RESOLVE_WITHIN_S, because)


JOB = Job(
    id="load-signals",
    title="Signals under a rising load, and the alert on them",
    question="Under a load that rises past what the server runs at once, which signal moves first, and does the "
             "page's alert fire and resolve in a real Prometheus?",
    pages=("metrics.md",),
    collect=collect,
    claims=(
        Claim("load-signals.running-capped", f"vllm:num_requests_running stops at --max-num-seqs "
              f"({MAX_NUM_SEQS}) and the rest of the load shows up in vllm:num_requests_waiting.",
              decide_running_capped),
        Claim("load-signals.waiting-past-limit", f"vllm:num_requests_waiting stays at 0 while the clients are "
              f"no more than --max-num-seqs ({MAX_NUM_SEQS}) and rises within seconds of their passing it: it "
              f"marks the limit.", decide_waiting_past_limit, timing=True),
        Claim("load-signals.ttft-moves-with-queue", "Once requests wait, the TTFT p95 climbs past twice the "
              "highest it reached while every client had a slot: the time spent waiting is part of the time to "
              "first token.",
              decide_ttft_moves_with_queue, timing=True),
        Claim("load-signals.kv-quiet", "KV cache usage stays low while requests wait when the limit is "
              "--max-num-seqs: it is no signal of this overload.", decide_kv_quiet),
        Claim("load-signals.kv-fraction", "vllm:kv_cache_usage_perc is a fraction of the cache's blocks, from 0 "
              "to 1, not a percentage.", decide_kv_fraction),
        Claim("load-signals.alert-silent-at-rest", "The page's queue alert is neither pending nor firing on an "
              "idle server.", decide_alert_silent_at_rest),
        Claim("load-signals.alert-fires", "Under the load the queue alert fires, once requests have waited for "
              "the rule's 20 s.", decide_alert_fires, timing=True),
        Claim("load-signals.alert-resolves", f"Having fired under the load, the alert resolves within "
              f"{RESOLVE_WITHIN_S:g} s of the last request ending.", decide_alert_resolves, timing=True),
    ),
    variant="max-num-seqs-4",
)
