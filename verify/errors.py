"""The one error type the verify stage reports to its user.

Every failure a user can cause or meet (a server that will not start, a port in
use, a missing model package, an unknown option) is raised as a VerifyError with
a one-line message; the command line prints it and exits non-zero.
"""


class VerifyError(Exception):
    """A failure with a one-line, user-facing explanation."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        # Extra lines (for example the tail of a server log) shown under the message.
        self.detail = detail
