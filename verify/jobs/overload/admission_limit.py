"""--max-num-queued-reqs: what a request past the limit gets, how fast, what the metrics count, and what
the openai client makes of it.

The job launches its own server with --max-num-seqs 1 and --max-num-queued-reqs LIMIT (a release that
does not know the flag refuses to start, and that refusal is the observation). It sends BURST
completions at the same moment (the page's snippet, overload/burst.py), reading /metrics before and
after. Then, with the limit filled by LIMIT long streams, it calls the openai client (overload/sdk_retry.py)
once with its default retries and once with none, reading the admission counter around each call; the
streams are closed once the client has returned, as nothing after that needs them. Around the burst it also
keeps what the two other places an operator looks at saw: the API server's HTTP counter
(http_requests_total, by handler and status) and the server's log (access and request-log lines).
"""

from __future__ import annotations

import re

from verify.job import OFFLINE, Claim, Job, verdict_if
from verify.jobs.overload._admission import (NO_COUNTER, counter_delta, counters, decide_flag_known, flag_known,
                                             idle, not_known)

LIMIT = 2
FLAGS = ("--max-num-seqs", "1", "--max-num-queued-reqs", str(LIMIT))
BURST = 6
BURST_TOKENS = 32
FILL_TOKENS = 400  # the streams that hold the limit while the client is called (closed once it returned)
REFUSED_WITHIN_S = 1.0  # the claim: a refusal comes this soon (the margin covers six client threads starting at once)
REASON = "max_num_queued_reqs"
COUNTER = f"vllm:admission_rejections_total{{{REASON}}}"  # as _admission.counters keys it
BUSY = "The engine is currently busy"  # the start of the refusal's message
HANDLER = "/v1/completions"  # the burst's endpoint (overload/burst.py)
# The log lines kept around the burst: uvicorn's access line of each completion, and the request log's.
LOG_LINE = re.compile(r'"POST /v1/completions HTTP/1\.1" \d{3}|Received request|Added request|[Aa]bort|'
                      r"Finished request|[Rr]eject|busy")
ACCESS_STATUS = re.compile(r'"POST /v1/completions HTTP/1\.1" (\d{3})')


def collect(ctx) -> dict:
    import time

    import httpx

    from verify.jobs.health import _watch
    from verify.measure import capture, metrics
    look = ctx.snippet(_watch.SNIPPET)
    burst = ctx.snippet("overload/burst.py")
    sdk = ctx.snippet("overload/sdk_retry.py")
    data: dict = {"flags": list(FLAGS), "burst": BURST, "limit": LIMIT}
    with ctx.launch(FLAGS) as srv:
        polls, ready_s = _watch.wait_ready(ctx, srv, look)
        if ready_s is None:
            # A release without the flag stops at its argument parser: its log says so, and that is the finding.
            log, lines = srv.log_capture(0)
            data["start"] = {**log, "exit_code_of_server": srv.process.poll(), "polls": len(polls),
                             "unrecognized": [x for x in lines if "unrecognized arguments" in x][-1:]}
            return data
        data["start"] = capture.results("startup-polls", polls, polls=polls, ready_s=ready_s)
        with httpx.Client(base_url=srv.url, timeout=10.0) as client:
            before, http_before, mark = counters(client), metrics.read_all(srv.url), srv.log_size()
            answers = burst.burst(srv.api, _watch.MODEL, BURST, BURST_TOKENS)
            idle(client)
            time.sleep(0.5)  # counters move just after a request is done
            after, http_after = counters(client), metrics.read_all(srv.url)
            data["burst_answers"] = capture.results("burst", answers, statuses=[a.get("status") for a in answers],
                                                    answers=answers, expect_status=[503],
                                                    counters_before=before, counters_after=after)
            data["burst_http_moved"] = metrics.delta(http_before, http_after, "http_requests_total")
            data["burst_log_read"], lines = srv.log_capture(mark)
            data["burst_log"] = [line for line in lines if LOG_LINE.search(line)][:200]
            data["sdk"] = {label: _sdk_call(srv, client, sdk, retries)
                           for label, retries in (("default", None), ("no retries", 0))}
    return data


def _sdk_call(srv, client, sdk, retries) -> dict:
    """Fill the limit with long streams, call the openai client, read the admission counter around it."""
    import time

    from verify.jobs.health import _watch
    from verify.measure import capture
    body = {"model": _watch.MODEL, "prompt": "Write a very long story.", "max_tokens": FILL_TOKENS,
            "ignore_eos": True, "stream": True}
    end = _hold(srv.api + "/completions", body, LIMIT, 120.0)
    time.sleep(1.0)  # both admitted: one running, one waiting
    before = counters(client)
    result = sdk.call(srv.api, _watch.MODEL, retries)
    after = counters(client)
    held = end()
    idle(client)
    return capture.results("sdk-call", [result], result=result, counters_before=before, counters_after=after,
                           limit_held_by=held)


def _hold(url: str, body: dict, n: int, timeout: float):
    """Start n streams of `body`; the returned function closes them (the server aborts each) and gives each
    one's status, data lines read, how it ended, or the error that ended it."""
    import threading

    import httpx
    stop = threading.Event()
    held: list[dict] = [{"status": None, "error": None, "data_lines": 0} for _ in range(n)]

    def run(out: dict) -> None:
        try:
            with httpx.Client(timeout=timeout) as client, client.stream("POST", url, json=body) as r:
                out["status"] = r.status_code
                for line in r.iter_lines():
                    out["data_lines"] += line.startswith("data: ")
                    if stop.is_set():  # a waiting stream sees it at its first line, once the one before is closed
                        break
                out["ended"] = "closed by the job" if stop.is_set() else "by the server"
        except httpx.HTTPError as e:
            out["error"] = f"{type(e).__name__}: {e}"[:200]
    threads = [threading.Thread(target=run, args=(h,), daemon=True) for h in held]
    for t in threads:
        t.start()

    def end() -> list[dict]:
        stop.set()
        for t in threads:
            t.join(timeout + 5)
        return held
    return end


def _answers(d):
    return d["burst_answers"]["answers"]


def _statuses(d) -> str:
    return ", ".join(f"{a.get('status')} in {a.get('seconds', 0):.2f} s" for a in _answers(d))


def decide_counts_running(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    admitted = sum(a.get("status") == 200 for a in _answers(d))
    return verdict_if(admitted == LIMIT, f"{BURST} sent at once to --max-num-seqs 1 --max-num-queued-reqs {LIMIT}: "
                                         f"{admitted} admitted; {_statuses(d)}")


def decide_refused_503(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    refused = [a for a in _answers(d) if a.get("status") != 200]
    if not refused:
        return verdict_if(None, "nothing was refused")
    ok = all(a.get("status") == 503 and str(a.get("message") or "").startswith(BUSY) for a in refused)
    return verdict_if(ok, f"{len(refused)} refused: " + "; ".join(f"{a.get('status')}: {a.get('message')}"
                                                                  for a in refused[:2]))


def decide_refused_fast(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    refused = [a["seconds"] for a in _answers(d) if a.get("status") == 503]
    admitted = [a["seconds"] for a in _answers(d) if a.get("status") == 200]
    if not refused or not admitted:
        return verdict_if(None, "the burst needs refused and admitted requests to compare: " + _statuses(d))
    return verdict_if(max(refused) <= REFUSED_WITHIN_S < min(admitted),
                      f"refusals answered in at most {max(refused):.3f} s; admitted requests took "
                      f"{min(admitted):.2f} to {max(admitted):.2f} s")


def decide_no_retry_after(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    refused = [a for a in _answers(d) if a.get("status") == 503]
    if not refused:
        return verdict_if(None, "nothing was refused")
    headers = sorted({str(a.get("retry_after")) for a in refused})
    return verdict_if(headers == ["None"], f"Retry-After on the {len(refused)} refusals: {', '.join(headers)}")


def decide_counter(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    b = d["burst_answers"]
    refused = sum(a.get("status") == 503 for a in _answers(d))
    admitted_done = sum(counter_delta(b, k) for k in b["counters_after"] if k.startswith("vllm:request_success_total"))
    if COUNTER not in b["counters_after"]:
        return verdict_if(False, f"{refused} refused; {NO_COUNTER}; vllm:request_success_total rose by "
                                 f"{admitted_done:.0f}")
    counted = counter_delta(b, COUNTER)
    return verdict_if(counted == refused and admitted_done == BURST - refused,
                      f"{refused} refused; vllm:admission_rejections_total{{reason=\"{REASON}\"}} rose by "
                      f"{counted:.0f}; vllm:request_success_total rose by {admitted_done:.0f}")


def decide_admitted_whole(d):
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    admitted = [a for a in _answers(d) if a.get("status") == 200]
    if not admitted:
        return verdict_if(None, "nothing was admitted")
    return verdict_if(all(a.get("tokens") == BURST_TOKENS and a.get("finish_reason") == "length" for a in admitted),
                      "admitted: " + ", ".join(f"{a.get('tokens')} tokens ({a.get('finish_reason')})" for a in admitted))


def _refused_count(d) -> int:
    return sum(a.get("status") == 503 for a in _answers(d))


def decide_refusal_in_log(d):
    """The access log has one 503 line for each refused request of the burst, and one 200 for each admitted."""
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    if d["burst_log_read"].get("error") or not d["burst_log"]:
        return verdict_if(None, f"the server's log was not read around the burst ({d['burst_log_read']})")
    statuses = [m.group(1) for line in d["burst_log"] for m in [ACCESS_STATUS.search(line)] if m]
    refused = _refused_count(d)
    received = sum("Received request" in line for line in d["burst_log"])
    busy = sum("failed" in line and BUSY in line for line in d["burst_log"])
    return verdict_if(statuses.count("503") == refused and statuses.count("200") == BURST - refused,
                      f"{refused} refused, {BURST - refused} admitted; the access log's lines for {HANDLER}: "
                      f"{statuses.count('503')} with 503, {statuses.count('200')} with 200; the request log: "
                      f"{received} received, {busy} failed with \"{BUSY}\"")


def decide_refusal_http_5xx(d):
    """http_requests_total for the burst's handler, by status: the refusals under 5xx."""
    if not flag_known(d):
        return verdict_if(None, not_known(d))
    counted = {k.split('status="')[1].split('"')[0]: v for k, v in d["burst_http_moved"].items()
               if f'handler="{HANDLER}"' in k}
    refused = _refused_count(d)
    if not refused:
        return verdict_if(None, "nothing was refused")
    if sum(counted.values()) != BURST:
        # A counter that did not move once per request of the burst read something else than this burst (or
        # nothing): it cannot say how it counts refusals.
        return verdict_if(None, f"http_requests_total for {HANDLER} did not count the burst's {BURST} requests, "
                                f"one each ({counted or 'no change'})")
    return verdict_if(counted == {"5xx": float(refused), "2xx": float(BURST - refused)},
                      f"{refused} refused, {BURST - refused} admitted; http_requests_total for {HANDLER} rose by "
                      f"{counted or 'nothing'} (by status)")


def _sdk_line(c: dict) -> str:
    r = c["result"]
    return (f"raised {r.get('raised')} (HTTP {r.get('status')}) after {r['seconds']:.2f} s; "
            f"vllm:admission_rejections_total rose by {counter_delta(c, COUNTER):.0f}")


def _sdk_call_undecided(d, label: str) -> str | None:
    """Why the client call `label` cannot decide a claim about its attempts, or None when it can."""
    if not flag_known(d):
        return not_known(d)
    c = d["sdk"][label]
    if any(h["status"] != 200 for h in c["limit_held_by"]):
        return "the streams meant to hold the limit were not both admitted"
    if any(h.get("ended") == "by the server" for h in c["limit_held_by"]):
        return "a stream meant to hold the limit ended before the client returned"
    if COUNTER not in c["counters_after"]:
        return NO_COUNTER + ", so the client's attempts cannot be counted"
    return None


def decide_sdk_retries(d):
    if why := _sdk_call_undecided(d, "default"):
        return verdict_if(None, why)
    c = d["sdk"]["default"]
    r = c["result"]
    return verdict_if(r.get("status") == 503 and counter_delta(c, COUNTER) == 1 + r["default_max_retries"],
                      f"with the client's defaults (max_retries {r['default_max_retries']}): " + _sdk_line(c))


def decide_sdk_no_retries(d):
    if why := _sdk_call_undecided(d, "no retries") or _sdk_call_undecided(d, "default"):
        return verdict_if(None, why)
    c, default = d["sdk"]["no retries"], d["sdk"]["default"]
    fast = c["result"]["seconds"] <= REFUSED_WITHIN_S < default["result"]["seconds"]
    return verdict_if(c["result"].get("status") == 503 and counter_delta(c, COUNTER) == 1 and fast,
                      "with max_retries=0: " + _sdk_line(c) + "; with the defaults: " + _sdk_line(default))


JOB = Job(
    id="admission-limit",
    title="Requests past --max-num-queued-reqs",
    question="With --max-num-queued-reqs set, what does a request past the limit get, how soon, what do the "
             "metrics count, and what does the openai client do with it?",
    pages=("overload.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # the job launches a server with flags a release may not know
    collect=collect,
    claims=(
        Claim("admission-limit.flag-known", "The server accepts --max-num-queued-reqs.", decide_flag_known),
        Claim("admission-limit.counts-running", f"The limit counts the running request too: with --max-num-seqs 1 "
              f"and --max-num-queued-reqs {LIMIT}, {LIMIT} of {BURST} requests sent at once are admitted, not "
              f"{LIMIT + 1}.", decide_counts_running),
        Claim("admission-limit.refused-503", "A request past the limit gets HTTP 503 with the message \"The "
              "engine is currently busy...\".", decide_refused_503),
        Claim("admission-limit.refused-fast", f"The refusal comes at once (within {REFUSED_WITHIN_S} s), while "
              "admitted requests take as long as their answers.", decide_refused_fast, timing=True),
        Claim("admission-limit.no-retry-after", "The 503 carries no Retry-After header.", decide_no_retry_after),
        Claim("admission-limit.counted", "vllm:admission_rejections_total, labelled with the limit's name, counts "
              "every refusal, and vllm:request_success_total only the admitted requests.", decide_counter),
        Claim("admission-limit.refusal-in-log", "The server's log shows each refusal: one access line with 503 "
              "for each refused request, one with 200 for each admitted.", decide_refusal_in_log),
        Claim("admission-limit.refusal-http-5xx", "The API server's HTTP counter, http_requests_total, counts "
              "each refusal under status 5xx and each admitted request under 2xx.", decide_refusal_http_5xx),
        Claim("admission-limit.admitted-whole", "Admitted requests are answered in full, as without the limit.",
              decide_admitted_whole),
        Claim("admission-limit.sdk-retries", "The openai client retries a 503 by itself: with its defaults one "
              "call reaches the server three times before the caller sees the error.", decide_sdk_retries),
        Claim("admission-limit.sdk-no-retries", "With max_retries=0 the caller sees the 503 at once, after one "
              "attempt.", decide_sdk_no_retries, timing=True),
    ),
)
