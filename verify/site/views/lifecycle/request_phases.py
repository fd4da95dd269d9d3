"""The phases of a request: the median trial's histograms as a table and as a timeline."""

from __future__ import annotations

from verify.jobs.lifecycle import request_phases as job
from verify.site import charts, html


def _median_trial(d):
    ts = sorted(d["trials"], key=lambda t: job.phase_seconds(t, "e2e_request_latency_seconds"))
    return ts[len(ts) // 2]


def fragment_table(record):
    t = _median_trial(record["data"])
    rows = [[p, f"{t['phases'][p]['observations']:.0f}", html.ms(job.phase_seconds(t, p))] for p in job.PHASES]
    rows.append(["(e2e minus queue and inference: the API server's part)", "", html.ms(job.api_server_time(t))])
    rows.append(["(the client's own clock, send to last byte)", "", html.ms(t["client_e2e_s"])])
    return html.table(["histogram (vllm:...)", "observations added", "seconds added"], rows)


def _ms(seconds: float) -> str:
    digits = 2 if seconds < 0.001 else 1 if seconds < 0.01 else 0
    return f"{seconds * 1000:.{digits}f} ms"


def timeline(record) -> charts.Timeline:
    """One request (the median of the trials), its phases laid end to end as the server measured them."""
    t = _median_trial(record["data"])
    client, e2e = t["client_e2e_s"], job.phase_seconds(t, "e2e_request_latency_seconds")
    queue, prefill, decode = (job.phase_seconds(t, p) for p in job.PHASES[:3])
    ttft = job.phase_seconds(t, "time_to_first_token_seconds")
    # The server's clock starts when the request reaches the API server; where that falls inside the
    # client's wait is not measured, so the server's bars start after half the client's extra time.
    s0 = (client - e2e) / 2
    rows = [("client: send to last byte", 0.0, client, 3), ("server: e2e latency", s0, e2e, 2),
            ("queue", s0, queue, 4), ("prefill", s0 + queue, prefill, 1), ("decode", s0 + queue + prefill, decode, 0)]
    return charts.Timeline(
        title="One request's time, as the client and the server measured it",
        x_label="ms", scale=1000,
        rows=tuple(charts.Span(label, start, dur, tone=tone, text=_ms(dur)) for label, start, dur, tone in rows),
        marks=(charts.Mark(s0 + ttft, f"server TTFT {_ms(ttft)}", tone=1),),
        note=f"Lengths are measured. Where the server's clock starts inside the client's wait is not: the server's "
             f"bars are drawn in the middle of the client's extra {_ms(client - e2e)}.")


FRAGMENTS = {"table": fragment_table}
CHARTS = {"timeline": timeline}
