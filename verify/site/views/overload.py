"""How the evidence of the overload article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.overload import _admission, admission_limit, queue_grows, queued_tokens
from verify.site import html
from verify.site.views import View


# A burst's answers, for the jobs that send one.
def _burst_answers_table(answers: list[dict]) -> str:
    rows = [[str(i + 1), str(a.get("status")), f"{a.get('seconds', 0):.3f}", str(a.get("prompt_tokens")),
             str(a.get("tokens")), str(a.get("retry_after")), str(a.get("message") or "")]
            for i, a in enumerate(answers)]
    return html.table(["request", "status", "seconds", "prompt tokens", "tokens", "Retry-After", "message"], rows)


# admission-limit
def admission_limit_burst(record) -> str:
    d = record["data"]
    if "burst_answers" not in d:
        return html.pre([f"the server did not start with {' '.join(d['flags'])}:", *d["start"].get("unrecognized", [])])
    b = d["burst_answers"]
    moved = [[k, f"{admission_limit.counter_delta(b, k):+.0f}"] for k in sorted(b["counters_after"])
             if admission_limit.counter_delta(b, k)]
    return _burst_answers_table(b["answers"]) + html.table(["/metrics, after the burst", "change"], moved)


def admission_limit_sdk(record) -> str:
    d = record["data"]
    if "sdk" not in d:
        return html.pre(["not measured: the server did not start with the flag"])
    rows = []
    for label, c in d["sdk"].items():
        r = c["result"]
        rows.append([label, str(r.get("raised")), str(r.get("status")), f"{r['seconds']:.2f}",
                     f"{admission_limit.counter_delta(c, admission_limit.COUNTER):+.0f}"])
    return html.table(["client retries", "raised", "status", "seconds until raised", "refusals counted"], rows)


# front-limit
def front_limit_burst(record) -> str:
    d = record["data"]
    finished = sum(v for k, v in d["moved"].items() if k.startswith("vllm:request_success_total"))
    return _burst_answers_table(d["burst_answers"]["answers"]) + html.table(
        ["the engine's /metrics", "change"], [["vllm:request_success_total", f"{finished:+.0f}"]])


# queue-grows
def queue_grows_table(record) -> str:
    d = record["data"]
    t = queue_grows.request_timings(d)
    one = t[0]["e2e"]
    rows = [[str(k), f"{x['ttft']:.2f}", f"{k * one:.2f}", f"{x['e2e']:.2f}", str(x["status"]), str(x["finish"])]
            for k, x in enumerate(t)]
    imp = d["impatient"]
    aborted = d["moved"].get('vllm:request_success_total{finished_reason="abort"}', 0.0)
    return html.table(["position", "first token (s)", "k answers (s)", "last event (s)", "status", "finish reason"],
                      rows) + html.table(["the impatient request", ""], [
        ["client", f"gave up after {queue_grows.IMPATIENT_TIMEOUT_S:.0f} s ({imp.get('error')})"],
        ["engine", f"abort counter +{aborted:.0f}; generation tokens +{d['moved'].get('vllm:generation_tokens_total', 0):.0f}"]])


# queued-tokens
def queued_tokens_burst(record) -> str:
    d = record["data"]
    if "burst_answers" not in d:
        return html.pre([f"the server did not start with {' '.join(d['flags'])}:", *d["start"].get("unrecognized", [])])
    b = d["burst_answers"]
    h = queued_tokens.holder_of(d)
    holder = html.table(["the long stream", ""], [
        ["prompt tokens", str(h.get("prompt_tokens"))],
        ["status", str(h.get("status"))],
        ["generating after (s)", str(b.get("generating_after_s"))],
        ["burst sent at (s)", str(b.get("burst_sent_s"))],
        ["last token at (s)", str(h.get("last_text_s"))],
        ["tokens, finish reason", f"{h.get('tokens')}, {h.get('finish_reason')}"]])
    moved = [[k, f"{_admission.counter_delta(b, k):+.0f}"] for k in sorted(b["counters_after"])
             if _admission.counter_delta(b, k)]
    return holder + _burst_answers_table(b["answers"]) + html.table(["/metrics, after the burst", "change"], moved)


VIEWS = {
    "admission-limit": View(fragments={"burst": admission_limit_burst, "sdk": admission_limit_sdk}),
    "front-limit": View(fragments={"burst": front_limit_burst}),
    "queue-grows": View(fragments={"table": queue_grows_table}),
    "queued-tokens": View(fragments={"burst": queued_tokens_burst}),
}
