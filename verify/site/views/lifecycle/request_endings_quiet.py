"""How a request ends, on a server with request logging off: the shared views."""

from verify.site.views.lifecycle._endings import FRAGMENTS

__all__ = ["FRAGMENTS"]
