"""Metrics article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def first_tokens_at_the_estimates(d: dict) -> None:
    """Each client's first token at Prometheus' estimate for its rank: the buckets then look exact."""
    import math

    from verify.jobs.metrics import ttft_quantiles as job
    values = sorted(r["ttft_s"] for r in d["requests"])
    for q in job.QUANTILES:
        k, est = max(math.ceil(q * len(values)), 1) - 1, job.estimate_of(d, q)
        values = [min(v, est) if j < k else est if j == k else max(v, est) for j, v in enumerate(values)]
    for r, v in zip(d["requests"], values):
        r["ttft_s"] = v


def first_tokens_unmoved_by_the_queue(d: dict) -> None:
    """load-signals.ttft-moves-with-queue: the TTFT p95 series holds its one-client value all through
    the load, queue or not."""
    points = d["series"]["series"]["ttft_p95"]
    base = next(v for t, v in points if t >= d["steps"][0]["start_s"] + 5 and v == v)
    d["series"]["series"]["ttft_p95"] = [[t, base if v == v else v] for t, v in points]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "load-signals.ttft-moves-with-queue": first_tokens_unmoved_by_the_queue,
    "ttft-quantiles.exact": first_tokens_at_the_estimates,
}
