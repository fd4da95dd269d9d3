"""Views of other-proxies: proxy-buffering's table, over this job's paths."""

from __future__ import annotations

from verify.jobs.streaming import other_proxies as job
from verify.site.views.streaming.proxy_buffering import fragment_for


def fragment(record):
    return fragment_for(record, job.PATHS)


FRAGMENTS = {"table": fragment}
