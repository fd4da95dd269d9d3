"""How a long prefill meets a decoding stream: the table and the arrivals chart (both stall jobs)."""

from __future__ import annotations

from verify.jobs.prefill_decode import _stall as job
from verify.site import charts, html


def fragment(record):
    a = job.analyse(record["data"])
    return html.table(["long prompt", "its time (sent to answered)", "stream's median gap",
                       "stream's largest gap", "stream tokens during the long prompt"],
                      [[f"{a['prompt_tokens']} tokens", f"{a['long_prompt_s']:.2f} s", html.ms(a["median_gap"]),
                        f"{a['largest_gap']:.2f} s", a["tokens_during_prefill"]]])


def stall(record) -> charts.Timeline:
    """When the stream's tokens arrived, against the long prompt's time from sent to answered."""
    d = record["data"]
    a = job.analyse(d)
    times = tuple(x["t"] for x in d["stream"]["lines"] if x["line"].startswith("data: "))
    start, end = a["window"]
    return charts.Timeline(
        title="When a decoding stream's tokens arrived while a long prompt was prefilled",
        x_label="seconds",
        rows=(charts.Span(f"long prompt ({a['prompt_tokens']} tokens): sent to answered", start, end - start, tone=4,
                          text=f"{a['long_prompt_s']:.2f} s"),
              charts.Span("stream: each dot is a token arriving", times[0], times[-1] - times[0], tone=0, events=times,
                          text=f"largest gap {a['largest_gap']:.2f} s")))


FRAGMENTS = {"table": fragment}
CHARTS = {"stall": stall}
