"""Health article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def models_ready_a_poll_later(d: dict) -> None:
    """health-probes.ready-together: /v1/models still answered 503 in the first poll where /health answered
    200, and 200 one poll later."""
    ready = d["startup"]["polls"][-1]
    d["startup"]["polls"].append({**ready, "t": ready["t"] + 0.25})
    ready["models"] = 503


def health_never_503_after_the_engine_died(d: dict) -> None:
    """health-probes.dead-health-503: every poll that got 503 after the engine core was killed got 200 instead
    (a server that kept reporting healthy until its port closed); the record may hold several 503s, so no
    single edit does it."""
    for p in d["death"]["polls"]:
        if p["health"] == 503:
            p["health"] = 200


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "health-probes.ready-together": models_ready_a_poll_later,
    "health-probes.dead-health-503": health_never_503_after_the_engine_died,
}
