"""The signals over time from Prometheus' own series, and the alert's states."""

from __future__ import annotations

from verify.jobs.metrics import load_signals as job
from verify.site import charts, html


def figure(record) -> charts.XY:
    d = record["data"]
    s = d["series"]["series"]
    finite = lambda pts: tuple((t, v) for t, v in pts if v == v)  # NaN where a window held no request
    firing = [t for t, state in job.alert_states(d) if state == "firing"]
    steps = d["steps"]
    bands = tuple(charts.Band(st["start_s"], (steps[i + 1]["start_s"] if i + 1 < len(steps) else d["load_end_s"]),
                              str(st["clients"])) for i, st in enumerate(steps))
    rules = [charts.Rule(firing[0], f"{job.ALERT} firing", vertical=True)] if firing else []
    return charts.XY(
        title=f"A rising load against --max-num-seqs {job.MAX_NUM_SEQS}, as Prometheus recorded it",
        x_label="seconds", y_label="requests", y2_label="p95 seconds (1 min window)",
        lines=(charts.Line("running", s["running"], tone=0, step=True),
               charts.Line("waiting", s["waiting"], tone=1, step=True),
               charts.Line("TTFT p95", finite(s["ttft_p95"]), tone=2, right_axis=True),
               charts.Line("e2e p95", finite(s["e2e_p95"]), tone=3, dashed=True, right_axis=True)),
        rules=tuple(rules), bands=bands, bands_label="clients at once",
        note=f"KV cache usage peaked at {max(v for _, v in s['kv_usage']):.3f} of the cache (not drawn: it stays "
             f"near the axis).")


def alerts(record):
    d = record["data"]
    rows, last = [], None
    for p in d["alerts"]["polls"]:
        state = next((a["state"] for a in p["alerts"] if a["name"] == job.ALERT), "inactive")
        if state != last:
            rows.append([f"{p['t']:.0f} s", state])
            last = state
    return html.table(["from", f"{job.ALERT} (GET /api/v1/alerts)"], rows)


def steps(record):
    d = record["data"]
    rows = []
    for i, st in enumerate(d["steps"]):
        end = d["steps"][i + 1]["start_s"] if i + 1 < len(d["steps"]) else d["load_end_s"]
        took = sorted(r["ended_s"] - r["started_s"] for r in d["requests"]
                      if st["start_s"] <= r.get("started_s", -1) < end and r.get("ended_s") is not None)
        rows.append([st["clients"], f"{st['start_s']:.0f} s", len(took), html.ms(took[len(took) // 2]) if took else "none"])
    return html.table(["clients", "from", "requests started", "median request time"], rows)


FRAGMENTS = {"alerts": alerts, "steps": steps}
CHARTS = {"signals": figure}
