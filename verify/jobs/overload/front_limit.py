"""The front line: nginx refusing requests past its connection limit before vLLM sees them.

nginx runs the page's configuration (snippets/nginx/limit-conn.conf: at most 2 requests in flight,
the rest refused with 429) in front of the run's default server. BURST completions are sent through
it at the same moment (the page's snippet, overload/burst.py); /metrics is read before and after.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SETUP = "nginx-limit-conn"
IN_FLIGHT = 2  # limit_conn in the configuration
BURST = 6
BURST_TOKENS = 32


def collect(ctx) -> dict:
    from verify.live import proxy as proxies
    from verify.measure import capture, metrics
    # The set-up is named here rather than in verify/live/proxy.py's table: that module is an input of
    # every proxy job's records, and a set-up only this job uses should not make them all stale.
    proxies.SETUPS.setdefault(SETUP, proxies.Setup("nginx", "limit-conn.conf", False))
    burst = ctx.snippet("overload/burst.py")
    proxy = ctx.proxy(SETUP)
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    answers = burst.burst(proxy.url + "/v1", "chat", BURST, BURST_TOKENS)
    metrics.wait_idle(ctx.server.url)
    moved = metrics.delta(before, metrics.read_all(ctx.server.url), "vllm:")
    log = proxy.access_log()
    return {"burst_answers": capture.results("burst", answers, statuses=[a.get("status") for a in answers],
                                             answers=answers, expect_status=[429]),
            "moved": moved, "proxy_log": capture.log("proxy-log", log, readable=True, access_lines=log)}


def _answers(d):
    return d["burst_answers"]["answers"]


def decide_nginx_refuses(d):
    refused = [a for a in _answers(d) if a.get("status") != 200]
    return verdict_if(len(refused) == BURST - IN_FLIGHT and all(a.get("status") == 429 for a in refused),
                      f"{BURST} sent at once through nginx with limit_conn {IN_FLIGHT}: statuses "
                      + ", ".join(f"{a.get('status')} in {a.get('seconds', 0):.2f} s" for a in _answers(d)))


def _access(line: str) -> tuple[str, str]:
    """(status, upstream response time) of an access-log line in the snippet's format: "-" for the upstream time
    means nginx never contacted vLLM for that request."""
    fields = line.split()
    return fields[1], fields[3]


def decide_engine_never_sees(d):
    admitted = sum(a.get("status") == 200 for a in _answers(d))
    refused = sum(a.get("status") == 429 for a in _answers(d))
    finished = sum(v for k, v in d["moved"].items() if k.startswith("vllm:request_success_total"))
    lines = [_access(line) for line in d["proxy_log"].get("access_lines") or ()]
    if len(lines) != len(_answers(d)):
        return verdict_if(None, f"nginx's access log holds {len(lines)} lines for {len(_answers(d))} requests sent")
    upstream_refused = [u for status, u in lines if status == "429" and u != "-"]
    return verdict_if(admitted > 0 and finished == admitted and not upstream_refused
                      and sum(status == "429" for status, _ in lines) == refused,
                      f"{admitted} passed nginx; the engine's vllm:request_success_total rose by {finished:.0f}; "
                      f"nginx's access log: {refused} refused with 429, "
                      f"{len(upstream_refused)} of them with an upstream response time (sent on to vLLM)")


def decide_admitted_whole(d):
    admitted = [a for a in _answers(d) if a.get("status") == 200]
    if not admitted:
        return verdict_if(None, "nothing passed nginx")
    return verdict_if(all(a.get("tokens") == BURST_TOKENS and a.get("finish_reason") == "length" for a in admitted),
                      "passed: " + ", ".join(f"{a.get('tokens')} tokens ({a.get('finish_reason')})" for a in admitted))


JOB = Job(
    id="front-limit",
    title="nginx refusing past its connection limit",
    question="With nginx's limit_conn in front of vLLM, what do requests past the limit get, and what does the "
             "engine see of them?",
    pages=("overload.md",),
    collect=collect,
    claims=(
        Claim("front-limit.nginx-refuses", f"nginx with limit_conn {IN_FLIGHT} refuses the requests past it with "
              f"the status it is given (429 here): {BURST - IN_FLIGHT} of {BURST} sent at once.",
              decide_nginx_refuses),
        Claim("front-limit.engine-never-sees", "The engine never sees a request nginx refused: it counts only "
              "those that passed.", decide_engine_never_sees),
        Claim("front-limit.admitted-whole", "The requests that pass are answered in full.", decide_admitted_whole),
    ),
)
