"""Capture a server-sent-event stream as raw lines with their arrival times."""

from __future__ import annotations

import json
import time

import httpx


def capture(url: str, body: dict, timeout: float = 120.0, verify: str | bool = True) -> dict:
    """POST body to url and record every line of the response with its arrival time (s after sending)."""
    lines = []
    t0 = time.perf_counter()
    with httpx.Client(timeout=timeout, verify=verify) as client:
        with client.stream("POST", url, json=body) as r:
            status = r.status_code
            headers = {k: v for k, v in r.headers.items() if k.lower() in ("content-type", "transfer-encoding", "cache-control")}
            for line in r.iter_lines():
                lines.append({"t": round(time.perf_counter() - t0, 4), "line": line})
    return {"status": status, "headers": headers, "lines": lines, "request": body}


def events(lines: list[dict]) -> list[dict]:
    """The data: payloads of a captured stream, parsed; the [DONE] sentinel as {'done': True}."""
    out = []
    for item in lines:
        line = item["line"]
        if not line.startswith("data: "):
            continue
        payload = line[len("data: "):]
        if payload == "[DONE]":
            out.append({"t": item["t"], "done": True})
        else:
            out.append({"t": item["t"], "chunk": json.loads(payload)})
    return out


def chunk_text(chunk: dict) -> str | None:
    """The text of a chat (delta.content) or completions (text) chunk."""
    if not chunk.get("choices"):
        return None
    choice = chunk["choices"][0]
    if "delta" in choice:
        return choice["delta"].get("content")
    return choice.get("text")
