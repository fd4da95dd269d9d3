"""The evidence of verify/jobs/offline/offline_batching.py on a page."""

from __future__ import annotations

from verify.jobs.offline import offline_batching as job
from verify.site import charts, html


def figure(record) -> charts.Bars:
    """How many times faster one generate() call over all the prompts is than a loop of one call per prompt."""
    d = record["data"]
    speedups = [(k, job.speedup(d["sizes"][str(k)])) for k in job.SIZES]
    return charts.Bars(
        title="How many times faster one generate() call is than one call per prompt, by number of prompts",
        x_label=f"prompts ({job.MAX_TOKENS} tokens each)", y_label="speed-up of one call over a loop",
        bars=tuple(charts.Bar(str(k), s, f"{s:.1f}x") for k, s in speedups), tone=0)


def fragment(record):
    rows = [[k, f"{x['batch_seconds']:.2f} s", f"{x['loop_seconds']:.2f} s", f"{job.speedup(x):.1f}x",
             "identical" if x["same_outputs"] else "different"] for k, x in record["data"]["sizes"].items()]
    return html.table([f"prompts ({job.MAX_TOKENS} tokens each)", "one generate() call", "one call per prompt",
                       "speed-up", "greedy outputs"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"speedup": figure}
