"""How a request ends, on a server that logs requests: the shared views."""

from verify.site.views.lifecycle._endings import FRAGMENTS

__all__ = ["FRAGMENTS"]
