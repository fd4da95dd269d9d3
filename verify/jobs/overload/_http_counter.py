"""The API server's HTTP counter as the overload jobs read it (admission_limit.py, queue_grows.py): how far
http_requests_total moved for one handler, by status class."""

from __future__ import annotations


def by_status(moved: dict[str, float], handler: str) -> dict[str, float]:
    """{status class ("2xx", "5xx", ...): rise} of the series for `handler`, from a metrics.delta of
    http_requests_total."""
    return {k.split('status="')[1].split('"')[0]: v for k, v in moved.items() if f'handler="{handler}"' in k}
