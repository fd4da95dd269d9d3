"""Reading recorded SSE lines (standard library only, so verdict rules and page fragments can use it)."""

from __future__ import annotations

import json

DATA = "data: "


def payloads(lines: list[dict]) -> list[str]:
    """The text after 'data: ' of every data line, [DONE] included."""
    return [item["line"][len(DATA):] for item in lines if item["line"].startswith(DATA)]


def chunks(lines: list[dict]) -> list[dict]:
    """Every JSON chunk of a recorded stream, in order ([DONE] left out)."""
    return [json.loads(p) for p in payloads(lines) if p != "[DONE]"]


def chunk_text(chunk: dict) -> str | None:
    """The text of a chat (delta.content) or completions (text) chunk; None when it has no choice."""
    if not chunk.get("choices"):
        return None
    choice = chunk["choices"][0]
    return choice["delta"].get("content") if "delta" in choice else choice.get("text")


def streamed_text(lines: list[dict]) -> str:
    """The text of a recorded stream, put together the right way: by concatenating strings."""
    return "".join(chunk_text(c) or "" for c in chunks(lines))


def arrival_spread(lines: list[dict]) -> float | None:
    """Seconds between the first and the last data: line; None when there is none."""
    times = [item["t"] for item in lines if item["line"].startswith(DATA)]
    return round(times[-1] - times[0], 4) if times else None
