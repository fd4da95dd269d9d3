"""The health article's checks a reader can run from outside: what /health and /v1/models answer, and,
where the reader asks for it (--watch-drain), what requests get while the endpoint drains.

A drain is something the reader starts (a rollout, a pod deleted, a server sent SIGTERM) while the
probe watches: it polls /health, /v1/models and a one-token completion every WATCH_EVERY_S and
reports every status it saw. A failed completion is what the health article explains: a 500 from a
draining server that is still routed to, a 502 or a refused connection from one that stopped.
"""

from __future__ import annotations

import time
from collections import Counter

import httpx

from verify.probe.checks import DIFFERS, NOT_CHECKED, OK, UNKNOWN, Check

WATCH_EVERY_S = 0.5
HEALTH_CLAIM = "health/#claim-health-probes--ready-together"
DEAD_CLAIM = "health/#claim-health-probes--dead-health-503"
DRAIN_CLAIM = "health/#in-production"


def _status(client: httpx.Client, method: str, url: str, body: dict | None = None) -> int | str:
    try:
        return client.request(method, url, json=body).status_code
    except httpx.HTTPError as e:
        return type(e).__name__


def health_check(endpoint) -> tuple[Check, dict]:
    """GET /health beside the OpenAI base: 200 on a ready server, 503 once its engine has died."""
    url = endpoint.base_url.removesuffix("/v1") + "/health"
    with endpoint.client() as c:
        status = _status(c, "GET", url)
    question = "Does /health answer 200, as a ready vLLM server does?"
    if status == 200:
        return Check("health", question, OK, "/health answered 200", HEALTH_CLAIM), {"health": status}
    if status == 503:
        return Check("health", question, DIFFERS, "/health answered 503: the engine has died", DEAD_CLAIM), \
            {"health": status}
    if status in (401, 403, 404):
        return Check("health", question, NOT_CHECKED, f"/health is not exposed at this address ({status})",
                     HEALTH_CLAIM), {"health": status}
    return Check("health", question, UNKNOWN, f"/health answered {status}", HEALTH_CLAIM), {"health": status}


def drain_watch(endpoint, model: str, seconds: float, progress=print) -> tuple[Check, dict]:
    """Poll while the reader drains the endpoint; every completion that did not get 200 is reported."""
    root = endpoint.base_url.removesuffix("/v1")
    body = {"model": model, "prompt": "Hi", "max_tokens": 1}
    polls = []
    progress(f"probe: watching for {seconds:.0f} s; start the drain now (a rollout, a pod deleted, SIGTERM)")
    t0 = time.perf_counter()
    with endpoint.client() as c:
        while time.perf_counter() - t0 < seconds:
            polls.append({"t": round(time.perf_counter() - t0, 3), "health": _status(c, "GET", root + "/health"),
                          "models": _status(c, "GET", endpoint.base_url + "/models"),
                          "completion": _status(c, "POST", endpoint.base_url + "/completions", body)})
            time.sleep(WATCH_EVERY_S)
    question = "Does every request sent while the endpoint drains get an answer?"
    seen = {k: dict(Counter(str(p[k]) for p in polls)) for k in ("health", "models", "completion")}
    failed = [p for p in polls if p["completion"] != 200]
    told = "; ".join(f"{k}: " + ", ".join(f"{n}x {s}" for s, n in v.items()) for k, v in seen.items())
    if not polls:
        return Check("drain", question, UNKNOWN, "no request was sent", DRAIN_CLAIM), {"drain_polls": polls}
    if not failed:
        return Check("drain", question, OK, f"{len(polls)} polls, every completion answered ({told})",
                     DRAIN_CLAIM), {"drain_polls": polls}
    why = sorted({str(p["completion"]) for p in failed})
    return Check("drain", question, DIFFERS, f"{len(failed)} of {len(polls)} completions failed ({', '.join(why)}); "
                                           f"{told}", DRAIN_CLAIM), {"drain_polls": polls}
