"""Views of proxy-buffering; fragment_for also shows other-proxies."""

from __future__ import annotations

from verify.jobs.streaming import proxy_buffering as job
from verify.site import html


def fragment(record):
    return fragment_for(record, job.PATHS)


def fragment_for(record, paths):
    d = record["data"]
    rows = []
    for path in paths:
        x = job.delivery(d["captures"][path])
        server = [html.ms(job.server_seconds(d, path, m)) if "server_side" in d else "n/a" for m in job.SERVER_SIDE]
        rows.append([path, x["events"], x["deliveries"], html.ms(x["ttft"]), html.ms(x["e2e"]), *server])
    return html.table(["path", "SSE events", "separate deliveries (lines > 5 ms apart)", "first text seen by client",
                       "last line", "server's TTFT", "server's e2e"], rows) + earlier_attempts(d)


def earlier_attempts(d) -> str:
    """Captures that failed and were tried again: what came back, and what the proxy logged then."""
    tried = [(path, a) for path, attempts in (d.get("earlier_attempts") or {}).items() for a in attempts]
    if not tried:
        return ""
    rows = [[path, a["attempt"], a["why"], a["stream"].get("status"), html.ms(a["stream"].get("ended_s")),
             " | ".join(a["proxy_log"]) or "(nothing logged)"] for path, a in tried]
    return html.table(["path tried again", "attempt", "why it did not count", "status", "ended after",
                       "the proxy's log at the time"], rows)


FRAGMENTS = {"table": fragment}
