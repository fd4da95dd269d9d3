"""Views of cancel-caddy-default: the shared cancellation views."""

from verify.site.views.streaming._cancellation import FRAGMENTS

__all__ = ["FRAGMENTS"]
