"""The evidence of verify/jobs/health/drain_grace.py on a page."""

from verify.site.views.health._drain_view import chart, timeline

FRAGMENTS = {"timeline": timeline}
CHARTS = {"streams": chart}
