"""Views of cancel-haproxy-default: the shared cancellation views."""

from verify.site.views.streaming._cancellation import FRAGMENTS

__all__ = ["FRAGMENTS"]


# Verdicts a faster or slower machine could flip (verify/site/hardware.py).
TIMING_CLAIMS = (
    "cancel-haproxy-default.httpx",
    "cancel-haproxy-default.openai",
)
