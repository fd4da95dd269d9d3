"""Views of stream-timing."""

from __future__ import annotations

from verify.jobs.streaming import stream_timing as job
from verify.site import charts, html


def fragment_table(record):
    sm = job.summaries_of(record["data"])
    def row(label, s, unit_ms=True):
        f = (lambda x: f"{x * 1000:.1f} ms") if unit_ms else (lambda x: f"{x:.3f} s")
        return [label, f(s["median"]), f"{f(s['p25'])} to {f(s['p75'])}", f"{f(s['min'])} to {f(s['max'])}", s["n"]]
    rows = [row("E2E, non-streaming", sm["e2e_non_streaming"], False), row("E2E, streaming", sm["e2e_streaming"], False),
            row("TTFT (streaming only)", sm["ttft"]), row("ITL, mean per request (streaming only)", sm["itl"])]
    return html.table(["measure", "median", "p25 to p75", "min to max", "trials"], rows)


def timeline(record) -> charts.Timeline:
    """The letter and the phone call, drawn from one trial of each mode (the middle one recorded)."""
    d = record["data"]["trials"]
    letter = d["non_streaming"][len(d["non_streaming"]) // 2]
    call = d["streaming"][len(d["streaming"]) // 2]
    marks = () if call["ttft"] is None else (charts.Mark(call["ttft"], f"TTFT {call['ttft'] * 1000:.0f} ms"),)
    return charts.Timeline(
        title="When the answer reached the client, without and with streaming (the same request)",
        x_label="seconds after sending",
        rows=(charts.Span("non-streaming: the whole answer arrives at once", 0.0, letter["e2e"], tone=1,
                          events=(letter["e2e"],), text=f"{letter['e2e']:.2f} s"),
              charts.Span(f"streaming: each dot is one of {len(call['arrivals'])} chunks", 0.0, call["e2e"], tone=0,
                          events=tuple(call["arrivals"]), text=f"{call['e2e']:.2f} s")),
        marks=marks)


FRAGMENTS = {"table": fragment_table}
CHARTS = {"timeline": timeline}
