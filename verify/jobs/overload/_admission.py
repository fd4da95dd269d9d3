"""What the two admission-limit jobs (admission_limit.py, queued_tokens.py) read alike: the admission counter
and the request gauges from /metrics, the wait for an idle engine, and how a release that does not know
the job's flag is told apart (its server stops at the argument parser, and the job records that line)."""

from __future__ import annotations

from verify.job import verdict_if

NO_COUNTER = "this release's /metrics has no vllm:admission_rejections_total"


def flag_known(d) -> bool:
    return "burst_answers" in d


def not_known(d) -> str:
    lines = d["start"].get("unrecognized") or ["(no line)"]
    return f"the server did not start with {' '.join(d['flags'])}: {lines[0][-160:]}"


def counter_delta(c: dict, key: str) -> float:
    return c["counters_after"].get(key, 0.0) - c["counters_before"].get(key, 0.0)


def decide_flag_known(d):
    if flag_known(d):
        return verdict_if(True, f"the server started with {' '.join(d['flags'])}")
    if not d["start"].get("unrecognized"):
        return verdict_if(None, "the server did not start, for another reason than an unknown flag")
    return verdict_if(False, not_known(d))


def counters(client) -> dict[str, float]:
    """The admission counter by reason, the finished requests by reason, the request gauges and the
    generated tokens, from /metrics."""
    from prometheus_client.parser import text_string_to_metric_families
    r = client.get("/metrics")
    r.raise_for_status()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            if s.name in ("vllm:admission_rejections_total", "vllm:request_success_total"):
                label = s.labels.get("reason") or s.labels.get("finished_reason")
                key = f"{s.name}{{{label}}}"
                out[key] = out.get(key, 0.0) + s.value
            elif s.name in ("vllm:num_requests_running", "vllm:num_requests_waiting",
                            "vllm:generation_tokens_total"):
                out[s.name] = out.get(s.name, 0.0) + s.value
    return out


def idle(client, limit_s: float = 120.0) -> None:
    import time
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        c = counters(client)
        if c.get("vllm:num_requests_running", 1) == 0 and c.get("vllm:num_requests_waiting", 1) == 0:
            return
        time.sleep(0.2)
