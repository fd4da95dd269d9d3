"""Capture a server-sent-event stream as raw lines with their arrival times."""

from __future__ import annotations

import ssl
import time

import httpx


def capture(url: str, body: dict, timeout: float = 120.0, verify: str | bool = True,
            headers: dict | None = None) -> dict:
    """POST body to url and record every line of the response with its arrival time (s after sending).

    verify: True, or the path of a CA file to trust (the throwaway certificate of a TLS proxy).
    A connection error or an error status is recorded, not raised: the capture is then
    failed (verify/captures.py) and every claim that rests on it inconclusive."""
    if isinstance(verify, str):
        verify = ssl.create_default_context(cafile=verify)
    lines: list[dict] = []
    status, kept_headers, error = None, {}, None
    t0 = time.perf_counter()
    try:
        with httpx.Client(timeout=timeout, verify=verify) as client:
            with client.stream("POST", url, json=body, headers=headers) as r:
                status = r.status_code
                kept_headers = {k: v for k, v in r.headers.items()
                                if k.lower() in ("content-type", "transfer-encoding", "cache-control",
                                                 "server", "via")}  # the last two name a proxy that says so
                for line in r.iter_lines():
                    lines.append({"t": round(time.perf_counter() - t0, 4), "line": line})
    except httpx.HTTPError as e:
        error = f"{type(e).__name__}: {e}"
    # When the response ended or broke off: the only time there is when a cut stream sent no line.
    ended_s = round(time.perf_counter() - t0, 4)
    return {"capture": "sse", "status": status, "error": error, "headers": kept_headers, "lines": lines,
            "ended_s": ended_s,
            "request": body}
