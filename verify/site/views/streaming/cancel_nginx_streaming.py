"""Views of cancel-nginx-streaming: the shared cancellation views."""

from verify.site.views.streaming._cancellation import FRAGMENTS

__all__ = ["FRAGMENTS"]


# Verdicts a faster or slower machine could flip (verify/site/hardware.py).
TIMING_CLAIMS = (
    "cancel-nginx-streaming.httpx",
    "cancel-nginx-streaming.openai",
)
