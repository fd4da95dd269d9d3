"""The one way a job records what came back.

A capture is the raw observation a verdict rests on, tagged `"capture": <kind>`
(verify/captures.py decides from it whether the observation failed). Its counts
are taken here from what really arrived, never written by the job: the HTTP
status and byte count of a response, the JSON items in its body, the results a
batch returned, the lines a log held. A job builds no capture dict itself
(tests/test_capture_api.py scans every job module for one).

Streams, commands, server logs and cancellation trials, which keep raw lines
with their times, are captured by `sse.capture`, `commands.run`,
`Server.log_capture` and `cancel.trial`; everything else goes through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized

import httpx


def body(r: httpx.Response) -> dict | list | None:
    """The response's JSON body, or None when it has none (an HTML error page, an empty body)."""
    try:
        return r.json()
    except ValueError:
        return None


def _items(parsed) -> int:
    """JSON items in a body: 1 for a non-empty object, the length of a list, 0 for nothing."""
    if isinstance(parsed, list):
        return len(parsed)
    return 1 if parsed else 0


def response(r: httpx.Response, kind: str = "request", *, expect_status: Iterable[int] | None = None,
             **fields) -> dict:
    """One HTTP answer: its status and size, and one event for a JSON body that holds something.

    A 2xx answer whose body is empty or not JSON counts nothing, so it is a failed capture."""
    out = {"capture": kind, "status": r.status_code, "bytes": len(r.content), "events": _items(body(r)),
           "error": None}
    if expect_status is not None:
        out["expect_status"] = sorted(expect_status)
    return {**out, **fields}


def no_response(kind: str, error: BaseException | str, **fields) -> dict:
    """A request that got no answer at all (refused, timed out, cut): a failed capture."""
    why = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return {"capture": kind, "status": None, "events": 0, "error": why, **fields}


def results(kind: str, received: Sized, *, statuses: Iterable[int | None] = (), error: str | None = None,
            **fields) -> dict:
    """A batch of results (answers, outputs, token ids): one event per result received.

    statuses: the HTTP status of each request in the batch; the capture carries the first
    that is not 2xx (or None when a request got no answer), else the first request's."""
    out = {"capture": kind, "events": len(received), "error": error}
    statuses = list(statuses)
    if statuses:
        bad = [s for s in statuses if s is None or not 200 <= s < 300]
        out["status"] = bad[0] if bad else statuses[0]
        if bad and bad[0] is None and not error:
            out["error"] = "a request of the batch got no answer"
    return {**out, **fields}


def log(kind: str, lines: list[str], *, readable: bool, **fields) -> dict:
    """Lines read from a log: one event per line; a log that could not be read is a failed capture."""
    return {"capture": kind, "events": len(lines), "lines_read": len(lines),
            "error": None if readable else "the log could not be read", **fields}


def answer(r: httpx.Response, kind: str = "probe", *, expect_status: Iterable[int] | None = None, **fields) -> dict:
    """One HTTP answer whose status line and headers are the observation, whatever its body holds.

    For endpoints whose answer is not JSON by design (GET /health: 200 with an empty body; /metrics:
    Prometheus text): the answer that arrived is its one event, so only an unexpected status fails it
    (as with `probe.probe`). An answer that should carry a JSON body is a `response`."""
    return {**response(r, kind, expect_status=expect_status), "events": 1, **fields}
