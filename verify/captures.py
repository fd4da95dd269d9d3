"""Which captures in a job's recorded data failed.

Every raw capture a job records (a stream, a command's output, a request, a
trial) is a dict tagged with `"capture": <kind>` and carries what happened:
`status` (HTTP status, if any), `error` (what went wrong, if anything) and the
received items (`lines`, or an `events` count). A capture failed when it got an
error it did not expect, a non-2xx status, or nothing at all. The decision is
recomputed from those raw fields every time, so a record can never hold a
verdict that a failed capture produced.

Captures that are meant to end in an error (a stream cut by a stopping proxy, a
client timing out) say so with `expect_error: true`; they still fail when
nothing arrived, or on a status other than the ones they expect.
"""

from __future__ import annotations

from typing import Iterator

TAG = "capture"


def iter_captures(value, where: str = "data") -> Iterator[tuple[str, dict]]:
    """Every tagged capture in recorded data, with where it is (data.captures.direct)."""
    if isinstance(value, dict):
        if TAG in value:
            yield where, value
        for key, item in value.items():
            yield from iter_captures(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from iter_captures(item, f"{where}[{i}]")


def received(capture: dict) -> int:
    """How many items the capture got: data lines of a stream, lines of a command, or its events count."""
    if "lines" in capture:
        lines = capture["lines"]
        if capture[TAG] == "sse":
            return sum(1 for item in lines if str(item.get("line", "")).startswith("data: "))
        return len(lines)
    return int(capture.get("events", 0) or 0)


def failure(capture: dict) -> str | None:
    """Why the capture failed, or None when it did not."""
    if capture.get("not_live"):
        # An attempt repeated because it showed nothing (a cancellation trial that did not catch the
        # request generating, or an empty 200 from a proxy): kept for the record, decided by nothing;
        # the attempt that replaced it is judged instead, and when every attempt missed, the rules
        # give inconclusive.
        return None
    kind = capture[TAG]
    error = capture.get("error")
    if error and not capture.get("expect_error"):
        return f"{kind}: {error}"
    status = capture.get("status")
    allowed = capture.get("expect_status")
    if status is not None and not (200 <= status < 300) and status not in (allowed or ()):
        return f"{kind}: HTTP status {status}"
    if "exit_code" in capture and capture["exit_code"] not in (0, None) and not capture.get("expect_error"):
        return f"{kind}: exited with code {capture['exit_code']}"
    if received(capture) == 0:
        return f"{kind}: nothing received" + (f" ({error})" if error else "")
    return None


def failed_captures(data) -> list[str]:
    """One line per failed capture in the data, naming where it is."""
    return [f"{where}: {why}" for where, c in iter_captures(data) if (why := failure(c))]


def has_captures(data) -> bool:
    return any(True for _ in iter_captures(data))
