"""A long prefill meets a decoding stream: the shared views (verify/site/views/prefill_decode/_stall.py)."""

from verify.site.views.prefill_decode._stall import CHARTS, FRAGMENTS

__all__ = ["CHARTS", "FRAGMENTS"]


# Verdicts a faster or slower machine could flip (verify/site/hardware.py).
TIMING_CLAIMS = (
    "prefill-stall.decode-waits",
    "prefill-stall.chunked-prefill-on-by-default",
)
