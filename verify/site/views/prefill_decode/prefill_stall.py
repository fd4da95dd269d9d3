"""A long prefill meets a decoding stream: the shared views (verify/site/views/prefill_decode/_stall.py)."""

from verify.site.views.prefill_decode._stall import CHARTS, FRAGMENTS

__all__ = ["CHARTS", "FRAGMENTS"]
