"""Health article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def models_ready_a_poll_later(d: dict) -> None:
    """health-probes.ready-together: /v1/models still answered 503 in the first poll where /health answered
    200, and 200 one poll later."""
    ready = d["startup"]["polls"][-1]
    d["startup"]["polls"].append({**ready, "t": ready["t"] + 0.25})
    ready["models"] = 503


def every_stream_told_abort(d: dict) -> None:
    """drain-abort.not-told: every stream of every trial got finish_reason abort and [DONE] at SIGTERM, as
    both streams of one 0.32.0 trial did."""
    from tests.rules._records import compact
    for trial in d["trials"]:
        for s in trial["drain"]["streams"]:
            raw = s["stream"]
            t = raw["lines"][-1]["t"] if raw["lines"] else 0.0
            raw["lines"] = [x for x in raw["lines"] if "error" not in x["line"] and x["line"] != "data: [DONE]"]
            raw["lines"] += [{"t": t, "line": compact({"choices": [{"index": 0, "text": "", "finish_reason": "abort"}]})},
                             {"t": t, "line": "data: [DONE]"}]
            raw["error"] = None


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "health-probes.ready-together": models_ready_a_poll_later,
    "drain-abort.not-told": every_stream_told_abort,
}
