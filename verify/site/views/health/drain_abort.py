"""The evidence of verify/jobs/health/drain_abort.py on a page."""

from verify.site.views.health._drain_view import trials, trials_chart

FRAGMENTS = {"timeline": trials}
CHARTS = {"streams": trials_chart}
