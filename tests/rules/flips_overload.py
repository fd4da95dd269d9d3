"""Overload article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def flag_refused_at_start(d: dict) -> None:
    """admission-limit.flag-known: the server stopped at its argument parser, as a release without the flag does
    (the line is the one vLLM 0.27.0's parser printed, in that release's record)."""
    for key in ("burst_answers", "sdk"):
        d.pop(key, None)
    d["start"]["unrecognized"] = ["api_server.py: error: unrecognized arguments: --max-num-queued-reqs"]


def tokens_flag_refused_at_start(d: dict) -> None:
    """queued-tokens.flag-known: the server stopped at its argument parser, as a release without the flag does."""
    for key in ("burst_answers", "holder"):
        d.pop(key, None)
    d["start"]["unrecognized"] = ["api_server.py: error: unrecognized arguments: --max-num-queued-tokens 22"]


def no_abort_in_the_request_log(d: dict) -> None:
    """queue-grows.impatient-in-log: the log received the given-up request but says nothing of its abort
    (its two lines, "Aborted request(s)" and "Request ... aborted", go; no single edit removes both)."""
    import re
    d["log"] = [line for line in d["log"] if not re.search("[Aa]bort", line)]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "queue-grows.impatient-in-log": no_abort_in_the_request_log,
    "admission-limit.flag-known": flag_refused_at_start,
    "queued-tokens.flag-known": tokens_flag_refused_at_start,
}
