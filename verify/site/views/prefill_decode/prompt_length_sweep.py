"""TTFT and ITL against prompt length: the table and the chart."""

from __future__ import annotations

from verify.jobs.prefill_decode import prompt_length_sweep as job
from verify.site import charts, html


def fragment_table(record):
    rows = [[r["prompt_tokens"], f"{r['ttft'] * 1000:.0f} ms", f"{r['ttft_min'] * 1000:.0f} to {r['ttft_max'] * 1000:.0f} ms",
             f"{r['prefill'] * 1000:.0f} ms", f"{r['itl'] * 1000:.1f} ms", f"{r['server_itl'] * 1000:.1f} ms", r["n"]]
            for r in job.by_length(record["data"])]
    return html.table(["prompt tokens", "TTFT (median)", "TTFT (min to max)", "server prefill (median)",
                       "ITL (median)", "server ITL (median)", "trials"], rows)


def sweep(record) -> charts.XY:
    """Client TTFT (median, with its range) and ITL (median) against the prompt's length in tokens."""
    rows = job.by_length(record["data"])
    return charts.XY(
        title="Time to first token and inter-token latency by prompt length",
        x_label="prompt tokens", y_label="ms",
        lines=(charts.Line("TTFT (median; whiskers: min to max)",
                           tuple((r["prompt_tokens"], r["ttft"] * 1000) for r in rows), tone=1, markers=True,
                           values="{:.0f}", spread=tuple((r["ttft_min"] * 1000, r["ttft_max"] * 1000) for r in rows)),
               charts.Line("ITL (median)", tuple((r["prompt_tokens"], r["itl"] * 1000) for r in rows), tone=0,
                           markers=True, values="{:.0f}")),
        x_ticks=tuple(r["prompt_tokens"] for r in rows))


FRAGMENTS = {"table": fragment_table}
CHARTS = {"sweep": sweep}
