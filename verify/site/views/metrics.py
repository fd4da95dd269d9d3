"""How the evidence of the metrics article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.metrics import load_signals, metric_names, ttft_quantiles
from verify.site import charts, html
from verify.site.views import View


# load-signals: the signals over time from Prometheus' own series, and the alert's states.
def load_signals_chart(record) -> charts.XY:
    d = record["data"]
    s = d["series"]["series"]
    finite = lambda pts: tuple((t, v) for t, v in pts if v == v)  # NaN where a window held no request
    firing = [t for t, state in load_signals.alert_states(d) if state == "firing"]
    steps = d["steps"]
    bands = tuple(charts.Band(st["start_s"], (steps[i + 1]["start_s"] if i + 1 < len(steps) else d["load_end_s"]),
                              str(st["clients"])) for i, st in enumerate(steps))
    rules = [charts.Rule(firing[0], f"{load_signals.ALERT} firing", vertical=True)] if firing else []
    return charts.XY(
        title=f"A rising load against --max-num-seqs {load_signals.MAX_NUM_SEQS}, as Prometheus recorded it",
        x_label="seconds", y_label="requests", y2_label="p95 seconds (1 min window)",
        lines=(charts.Line("running", s["running"], tone=0, step=True),
               charts.Line("waiting", s["waiting"], tone=1, step=True),
               charts.Line("TTFT p95", finite(s["ttft_p95"]), tone=2, right_axis=True),
               charts.Line("e2e p95", finite(s["e2e_p95"]), tone=3, dashed=True, right_axis=True)),
        rules=tuple(rules), bands=bands, bands_label="clients at once",
        note=f"KV cache usage peaked at {max(v for _, v in s['kv_usage']):.3f} of the cache (not drawn: it stays "
             f"near the axis).")


def load_signals_alerts(record):
    d = record["data"]
    rows, last = [], None
    for p in d["alerts"]["polls"]:
        state = next((a["state"] for a in p["alerts"] if a["name"] == load_signals.ALERT), "inactive")
        if state != last:
            rows.append([f"{p['t']:.0f} s", state])
            last = state
    return html.table(["from", f"{load_signals.ALERT} (GET /api/v1/alerts)"], rows)


def load_signals_steps(record):
    d = record["data"]
    rows = []
    for i, st in enumerate(d["steps"]):
        end = d["steps"][i + 1]["start_s"] if i + 1 < len(d["steps"]) else d["load_end_s"]
        took = sorted(r["ended_s"] - r["started_s"] for r in d["requests"]
                      if st["start_s"] <= r.get("started_s", -1) < end and r.get("ended_s") is not None)
        rows.append([st["clients"], f"{st['start_s']:.0f} s", len(took), html.ms(took[len(took) // 2]) if took else "none"])
    return html.table(["clients", "from", "requests started", "median request time"], rows)


# metric-counts: each request's usage beside what the counters added for it.
REQUEST_NAMES = {"cold": "300-token prompt, first time", "warm": "the same prompt again (prefix hit)",
                 "chat": "chat request"}


def metric_counts_table(record):
    rows = []
    for key, r in record["data"]["requests"].items():
        c, u = r["change"], r["usage"] or {}
        rows.append([REQUEST_NAMES.get(key, key), u.get("prompt_tokens"), f"+{c['vllm:prompt_tokens_total']:.0f}",
                     f"+{c['vllm:prefix_cache_queries_total']:.0f}", f"+{c['vllm:prefix_cache_hits_total']:.0f}",
                     u.get("completion_tokens"), f"+{c['vllm:generation_tokens_total']:.0f}",
                     f"+{c['vllm:inter_token_latency_seconds_count']:.0f}"])
    return html.table(["request", "usage prompt", "prompt_tokens_total", "prefix_cache_queries_total",
                       "prefix_cache_hits_total", "usage completion", "generation_tokens_total",
                       "inter_token_latency count"], rows)


# metric-names: the recommended metrics as the server exports them, with its own help text.
def metric_names_recommended(record):
    fam = record["data"]["families"]
    rows = []
    for name, kind in metric_names.RECOMMENDED.items():
        f = fam.get(name) or {}
        series = sorted(f.get("samples", {}))
        shown = series[0] if len(series) == 1 else ", ".join(s.removeprefix(name) or name for s in series)
        rows.append([name, f.get("type", "not exported"), shown, f.get("help", "")])
    return html.table(["metric", "type", "series", "help text (the server's own)"], rows)


def metric_names_counts(record):
    d = record["data"]
    kinds: dict[str, int] = {}
    for f in d["families"].values():
        kinds[f["type"]] = kinds.get(f["type"], 0) + 1
    return html.table(["vllm: families", "series names", *sorted(kinds)],
                      [[len(d["families"]), len(d["series"]), *[kinds[k] for k in sorted(kinds)]]])


# ttft-quantiles: exact percentiles of the clients' first tokens beside Prometheus' estimates, and the
# buckets between.
def ttft_quantiles_table(record):
    d = record["data"]
    values = [r["ttft_s"] for r in d["requests"]]
    rows = []
    for q in ttft_quantiles.QUANTILES:
        x, e = ttft_quantiles.exact(values, q), ttft_quantiles.estimate_of(d, q)
        lo, up = ttft_quantiles.bucket_of(d, x)
        rows.append([f"p{q * 100:g}", html.ms(x), html.ms(e), f"{(e - x) / x:+.0%}", f"{lo:g} s to {up:g} s"])
    return html.table(["percentile", "exact (clients)", "histogram_quantile", "difference", "bucket of the exact value"],
                      rows)


def ttft_quantiles_buckets(record):
    d = record["data"]
    counted = sorted(((float(le), n) for le, n in d["prometheus"]["buckets"].items()))
    rows, below = [], 0.0
    for le, n in counted:
        if n > below:
            rows.append([f"le={le:g}", f"{n:.0f}", f"{n - below:.0f}"])
        below = n
    return html.table(["bucket (upper bound)", "requests at or below", "requests in this bucket"], rows)


VIEWS = {
    "load-signals": View(fragments={"alerts": load_signals_alerts, "steps": load_signals_steps},
                         charts={"signals": load_signals_chart}),
    "metric-counts": View(fragments={"table": metric_counts_table}),
    "metric-names": View(fragments={"recommended": metric_names_recommended, "counts": metric_names_counts}),
    "ttft-quantiles": View(fragments={"table": ttft_quantiles_table, "buckets": ttft_quantiles_buckets}),
}
