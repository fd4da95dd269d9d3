"""Views of api-server-cpu."""

from __future__ import annotations

from verify.jobs.streaming import api_server_cpu as job
from verify.site import html


def fragment(record):
    import statistics
    d = record["data"]
    rows = []
    for c in job.LEVELS:
        for stream in (False, True):
            per = [job.cpu_per_token_ms(b) for b in job.batches_of(d, stream, c)]
            api, engine = [p["api"] for p in per], [p["engine"] for p in per]
            rows.append([c, "yes" if stream else "no", len(per), f"{statistics.median(api):.2f} ms",
                         f"{min(api):.2f} to {max(api):.2f} ms", f"{statistics.median(engine):.2f} ms",
                         f"{statistics.median(a / e for a, e in zip(api, engine)) * 100:.1f} %"])
    return html.table(["concurrency", "streamed", "batches", "API server CPU per token (median)", "min to max",
                       "engine CPU per token (core + worker, median)", "API server / engine (median)"], rows)


FRAGMENTS = {"table": fragment}
