"""Streams sent at (nearly) the same time, each recorded with when it was sent."""

from __future__ import annotations

import threading
import time

from verify.measure import transcript

# Enough for the adapters' answers to part from the base model's (they do from the first words).
MAX_TOKENS = 16


def body(model: str, prompt: str, max_tokens: int = MAX_TOKENS, **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
            "max_tokens": max_tokens, "stream": True, **extra}


def together(url: str, bodies: list[dict], stagger_s: float = 0.0) -> list[dict]:
    """Send every body as a stream, the i-th stagger_s * i seconds after the first; for each, its
    capture and `started_s`, when it was sent (s after the first), so spans share one clock."""
    from verify.measure import sse
    out: list[dict] = [{} for _ in bodies]
    t0 = time.perf_counter()

    def one(i: int) -> None:
        time.sleep(stagger_s * i)
        started = time.perf_counter() - t0
        out[i] = {"stream": sse.capture(url, bodies[i]), "started_s": round(started, 4)}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def text(sent: dict) -> str | None:
    """What the stream answered; None for a stream that failed (an error status, nothing received)."""
    s = sent.get("stream") or {}
    if s.get("status") != 200 or s.get("error"):
        return None
    return transcript.streamed_text(s["lines"])


def span(sent: dict) -> tuple[float, float] | None:
    """When the stream's first and last text arrived, on the shared clock; None without text."""
    times = [line["t"] for line in sent["stream"]["lines"] if _has_text(line["line"])]
    return (sent["started_s"] + times[0], sent["started_s"] + times[-1]) if times else None


def _has_text(line: str) -> bool:
    import json
    if not line.startswith("data: {"):
        return False
    return bool(transcript.chunk_text(json.loads(line[6:])))


def shared(a: tuple[float, float] | None, b: tuple[float, float] | None) -> float:
    """The share of the shorter span that the two spans have in common (0 to 1). Times are arrivals at
    the client: a busy API server can deliver one stream's last tokens after another's first."""
    if not (a and b):
        return 0.0
    common = min(a[1], b[1]) - max(a[0], b[0])
    shorter = min(a[1] - a[0], b[1] - b[0])
    return max(0.0, common) / shorter if shorter > 0 else 0.0
