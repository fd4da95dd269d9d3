"""histogram_quantile over the server's TTFT buckets against the exact percentiles of the same requests.

A real Prometheus scrapes the server every second with the page's configuration.
Requests go one at a time, streamed, half with a short prompt and half with a
long one (fresh cache_salt each, so nothing hits the prefix cache); the client
times each first token. Prometheus is then asked for p50, p90 and p99 of the
increase of vllm:time_to_first_token_seconds_bucket between a scrape before the
requests and one after them (each the first scrape taken once the server was idle, waited
for rather than slept for), and for the bucket counts themselves.
"""

from __future__ import annotations

import math

from verify.job import Claim, Job, Verdict, INCONCLUSIVE, verdict_if

QUANTILES = (0.5, 0.9, 0.99)
SHORT_TOKENS, LONG_TOKENS = 60, 700
# Requests of each length: the estimates read only the buckets' proportions (half and half), and
# nearest-rank p90 and p99 of twelve are the 11th and the 12th, as of 24 they are the 22nd and the 24th.
ROUNDS = 6
SCRAPE_S = 1.0
# "Not the exact percentile": at least one estimate off by more than this share of the exact value.
NOT_EXACT_ABOVE = 0.05
# The client's first token comes a little after the server's: this much slack at a bucket edge.
CLIENT_SLACK_S = 0.02
CONFIG, RULES = "metrics/prometheus.yml", ("metrics/recording-rules.yml", "metrics/alert-rules.yml")
BUCKET = "vllm:time_to_first_token_seconds_bucket"
# The window's ends wait for a scrape taken after the server was seen idle, polled this often, for at most this long.
SCRAPE_POLL_S, SCRAPE_WAIT_S = 0.1, 10.0


def _ttft(ctx, client, prompt: str) -> dict:
    import json
    import time
    import uuid

    from verify.measure import capture
    body = {"model": "chat", "prompt": prompt, "max_tokens": 2, "temperature": 0, "stream": True,
            "cache_salt": uuid.uuid4().hex}
    t0, first, chunks = time.perf_counter(), None, []
    with client.stream("POST", ctx.base_url + "/completions", json=body) as r:
        for line in r.iter_lines():
            if line.startswith("data: {"):
                chunks.append(line)
                if first is None and json.loads(line[6:])["choices"][0].get("text"):
                    first = time.perf_counter() - t0
    return capture.results("request", chunks, statuses=[r.status_code],
                           ttft_s=round(first, 5) if first is not None else None)


def collect(ctx) -> dict:
    import time

    import httpx

    from verify.live.prometheus import managed_prometheus, wait_for
    from verify.measure import capture, metrics
    from verify.measure.prompts import exact_prompt
    target = ctx.server.url.split("://", 1)[1]
    with httpx.Client(timeout=120) as client, \
            managed_prometheus(target, SCRAPE_S, SCRAPE_S, config_path=ctx.snippet_path(CONFIG),
                               rule_paths=tuple(ctx.snippet_path(r) for r in RULES)) as prom:
        short, long = (exact_prompt(ctx.server.url, client, n) for n in (SHORT_TOKENS, LONG_TOKENS))
        metrics.wait_idle(ctx.server.url)
        up = wait_for(prom.targets_up, 30)
        # A scrape of the idle server lies before t_start: wait for one taken after the server was seen idle
        # (about a scrape interval; a fixed 3 s before).
        idle = time.time()
        before = wait_for(lambda: _scraped_after(prom, idle), SCRAPE_WAIT_S, SCRAPE_POLL_S)
        t_start = time.time()
        time.sleep(0.1)
        requests = [_ttft(ctx, client, p) for _ in range(ROUNDS) for p in (short, long)]
        metrics.wait_idle(ctx.server.url)
        # And one after the last request: taken after the server was seen idle again.
        idle_after = time.time()
        after = wait_for(lambda: _scraped_after(prom, idle_after), SCRAPE_WAIT_S, SCRAPE_POLL_S)
        t_end = time.time()
        window = f"(sum by (le) ({BUCKET}) - sum by (le) ({BUCKET} @ {t_start:.3f}))"
        estimates = {str(q): prom.query(f"histogram_quantile({q}, {window})", at=t_end) for q in QUANTILES}
        buckets = prom.query(window, at=t_end)
    error = ("Prometheus never reported the server's target up" if not up else
             f"Prometheus took no scrape of the idle server within {SCRAPE_WAIT_S:g} s before the requests"
             if not before else
             f"Prometheus took no scrape within {SCRAPE_WAIT_S:g} s after the last request" if not after else None)
    return {"target_up": up, "requests": requests,
            "prometheus": capture.results("query", buckets, estimates=estimates, error=error,
                                          buckets={b["metric"]["le"]: float(b["value"][1]) for b in buckets}),
            "t_start": t_start, "t_end": t_end,
            "scrape_waits_s": {"before": round(t_start - idle, 3), "after": round(t_end - idle_after, 3)}}


def _scraped_after(prom, t: float) -> bool:
    """Whether Prometheus holds a scrape of the server's TTFT buckets taken after t (a scrape's time is when it
    began, so it saw the server as it was after t)."""
    got = prom.query(f"max(timestamp({BUCKET}))")
    return bool(got) and float(got[0]["value"][1]) > t


def exact(values: list[float], q: float) -> float:
    """The q-th percentile of the values by nearest rank: the value of the request at rank ceil(q x n)."""
    v = sorted(values)
    return v[max(math.ceil(q * len(v)), 1) - 1]


def interpolated(buckets: dict[str, float], q: float) -> float:
    """Prometheus' histogram_quantile: find the bucket holding rank q x count, interpolate linearly inside it."""
    bounds = sorted((float(le), n) for le, n in buckets.items())
    total = bounds[-1][1]
    rank, lower, below = q * total, 0.0, 0.0
    for upper, n in bounds:
        if n >= rank:
            if math.isinf(upper):
                return lower  # the highest finite bound, as Prometheus answers
            return lower + (upper - lower) * (rank - below) / (n - below)
        lower, below = upper, n
    raise ValueError("no bucket holds the rank")


def estimate_of(d, q) -> float:
    return float(d["prometheus"]["estimates"][str(q)][0]["value"][1])


def _ttfts(d) -> list[float]:
    values = [r["ttft_s"] for r in d["requests"]]
    if None in values:
        raise ValueError("a request produced no first token")
    return values


def bucket_of(d, value: float) -> tuple[float, float]:
    bounds = sorted(float(le) for le in d["prometheus"]["buckets"])
    lower = 0.0
    for upper in bounds:
        if value <= upper:
            return lower, upper
        lower = upper
    raise ValueError("above every bucket")


def _counted(d) -> float:
    return d["prometheus"]["buckets"]["+Inf"]


def _window_not_these(d) -> Verdict | None:
    """Inconclusive unless Prometheus' window counted exactly the requests sent: an empty window gives NaN
    estimates, and one that holds other requests compares estimates with percentiles of different sets."""
    if _counted(d) != len(d["requests"]):
        return Verdict(INCONCLUSIVE, f"Prometheus counted {_counted(d):.0f} first tokens for {len(d['requests'])} "
                                     "requests: the window does not hold exactly these requests")
    return None


def decide_linear_in_bucket(d):
    if (undecided := _window_not_these(d)) is not None:
        return undecided
    rows = [(q, estimate_of(d, q), interpolated(d["prometheus"]["buckets"], q)) for q in QUANTILES]
    return verdict_if(all(math.isclose(e, i, rel_tol=1e-9, abs_tol=1e-12) for _, e, i in rows),
                      f"{_counted(d):.0f} requests in the window; " + ", ".join(
                          f"p{q * 100:g}: Prometheus {e:.4f} s, linear inside the bucket {i:.4f} s" for q, e, i in rows))


def decide_within_a_bucket(d):
    values = _ttfts(d)
    if (undecided := _window_not_these(d)) is not None:
        return undecided
    rows = []
    for q in QUANTILES:
        x, e = exact(values, q), estimate_of(d, q)
        lower, upper = bucket_of(d, x)
        rows.append((q, x, e, lower, upper, lower - CLIENT_SLACK_S <= e <= upper + CLIENT_SLACK_S))
    return verdict_if(all(r[-1] for r in rows), f"{_counted(d):.0f} requests in the window; " + ", ".join(
        f"p{q * 100:g}: exact {x:.4f} s in bucket ({lo:g}, {up:g}], estimate {e:.4f} s" for q, x, e, lo, up, _ in rows))


def decide_exact(d):
    values = _ttfts(d)
    if (undecided := _window_not_these(d)) is not None:
        return undecided
    errs = [(q, exact(values, q), estimate_of(d, q)) for q in QUANTILES]
    worst = max(abs(e - x) / x for _, x, e in errs)
    return verdict_if(worst <= NOT_EXACT_ABOVE, f"{_counted(d):.0f} requests in the window; " + ", ".join(
        f"p{q * 100:g}: exact {x:.4f} s, estimate {e:.4f} s ({(e - x) / x:+.0%})" for q, x, e in errs) +
        f"; threshold {NOT_EXACT_ABOVE:.0%}")


JOB = Job(
    id="ttft-quantiles",
    title="histogram_quantile against the exact percentiles",
    question="How far is histogram_quantile over the server's TTFT buckets from the exact percentiles of the same "
             "requests, and why?",
    pages=("metrics.md",),
    collect=collect,
    claims=(
        Claim("ttft-quantiles.exact", "histogram_quantile over vllm:time_to_first_token_seconds gives the "
              "percentiles the clients measured (p50, p90 and p99 within 5 %).", decide_exact, timing=True),
        Claim("ttft-quantiles.linear-in-bucket", "Prometheus' estimate is a straight line inside one bucket: it "
              "finds the bucket that holds the rank and assumes the requests in it are spread evenly.",
              decide_linear_in_bucket),
        Claim("ttft-quantiles.within-a-bucket", "The estimate lands in the bucket that holds the exact percentile: "
              "its error is less than that bucket's width.", decide_within_a_bucket),
    ),
)
