"""Views of other-proxies: proxy-buffering's table, over this job's paths."""

from __future__ import annotations

from verify.jobs.streaming import other_proxies as job
from verify.site.views.streaming.proxy_buffering import fragment_for


def fragment(record):
    return fragment_for(record, job.PATHS)


FRAGMENTS = {"table": fragment}


# Verdicts a faster or slower machine could flip (verify/site/hardware.py).
TIMING_CLAIMS = (
    "other-proxies.caddy-default",
    "other-proxies.caddy-tls",
    "other-proxies.caddy-streaming",
    "other-proxies.haproxy-default",
    "other-proxies.haproxy-tls",
    "other-proxies.haproxy-streaming",
)
