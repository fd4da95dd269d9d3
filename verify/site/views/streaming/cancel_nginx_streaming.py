"""Views of cancel-nginx-streaming: the shared cancellation views."""

from verify.site.views.streaming._cancellation import FRAGMENTS

__all__ = ["FRAGMENTS"]
