"""Health article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def models_ready_a_poll_later(d: dict) -> None:
    """health-probes.ready-together: /v1/models still answered 503 in the first poll where /health answered
    200, and 200 one poll later."""
    ready = d["startup"]["polls"][-1]
    d["startup"]["polls"].append({**ready, "t": ready["t"] + 0.25})
    ready["models"] = 503


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "health-probes.ready-together": models_ready_a_poll_later,
}
