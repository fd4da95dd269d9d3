"""--max-num-queued-tokens: which prompts count against the limit, where it cuts, and what a refused
request gets.

The job launches its own server with --max-num-seqs 1 and --max-num-queued-tokens LIMIT (a release that
does not know the flag refuses to start, and that refusal is the observation). It starts one stream whose
prompt alone is longer than the limit and waits until that stream is generating; then it sends BURST short
completions at the same moment (the page's snippet, overload/burst.py), each waiting behind the stream,
reading /metrics before and after.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if
# The same launch, the same start-up finding on a release without the flag, read the same way.
from verify.jobs.overload._admission import decide_flag_known, flag_known, not_known

LIMIT = 22  # prompt tokens; the burst's prompts count 9 or 10 each, so LIMIT is no multiple of them
FLAGS = ("--max-num-seqs", "1", "--max-num-queued-tokens", str(LIMIT))
BURST = 6
BURST_TOKENS = 16
HOLDER_PROMPT = "Write a very long story about a lighthouse keeper. " * 8  # about 80 tokens: over the limit
HOLDER_TOKENS = 160
# A refusal comes at once, while admitted answers take ten seconds or more. Not admission_limit's 1 s: on a
# 2-core AVX2-only machine one refusal of 0.31.0's burst came in 1.06 s, six client threads starting together.
REFUSED_WITHIN_S = 2.0
REASON = "max_num_queued_tokens"
COUNTER = f"vllm:admission_rejections_total{{{REASON}}}"  # as _admission.counters keys it
GENERATED = "vllm:generation_tokens_total"
BACKLOG = "The engine has reached its prefill token backlog limit"  # the start of the refusal's message


def collect(ctx) -> dict:
    import time

    import httpx

    from verify.jobs.health import _watch
    from verify.jobs.overload._admission import counters, idle
    from verify.measure import capture
    look = ctx.snippet(_watch.SNIPPET)
    burst = ctx.snippet("overload/burst.py")
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
            before = counters(client)
            body = {"model": _watch.MODEL, "prompt": HOLDER_PROMPT, "max_tokens": HOLDER_TOKENS,
                    "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
            generated = before.get(GENERATED, 0.0)  # the readiness check's completion generated some already
            holder = _watch.stream_in_background(srv.api + "/completions", body, 120.0)
            generating_after_s = _wait_generating(client, generated)
            burst_began = time.monotonic()
            answers = burst.burst(srv.api, _watch.MODEL, BURST, BURST_TOKENS)
            stream, holder_began = holder()
            idle(client)
            after = counters(client)
        data["holder"] = stream  # a failed stream makes every claim that reads it inconclusive
        data["burst_answers"] = capture.results(
            "burst", answers, statuses=[a.get("status") for a in answers], answers=answers, expect_status=[503],
            counters_before=before, counters_after=after, generating_after_s=generating_after_s,
            burst_sent_s=round(burst_began - holder_began, 3))
    return data


def _wait_generating(client, generated: float, limit_s: float = 60.0) -> float | None:
    """Seconds until /metrics counts more generated tokens than `generated` (the holder has left prefill)."""
    import time

    from verify.jobs.overload._admission import counters
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if counters(client).get(GENERATED, 0.0) > generated:
            return round(time.monotonic() - t0, 3)
        time.sleep(0.1)
    return None


def _answers(d):
    return d["burst_answers"]["answers"]


def _admitted(d) -> list[dict]:
    return [a for a in _answers(d) if a.get("status") == 200]


def holder_of(d) -> dict:
    """The holder stream's prompt tokens, its last text chunk (s after it was sent) and how it ended."""
    import json

    from verify.jobs.health import _watch
    s = d["holder"]
    out = _watch.tokens_and_end(s)
    out["prompt_tokens"] = None
    for item in s.get("lines", []):
        line = str(item.get("line", ""))
        if line.startswith("data: {") and '"usage"' in line:
            usage = json.loads(line[6:]).get("usage") or {}
            out["prompt_tokens"] = usage.get("prompt_tokens")
    return out


def _undecided(d) -> str | None:
    """Why the record cannot decide this job's claims, or None when it can."""
    if not flag_known(d):
        return not_known(d)
    if d["burst_answers"].get("generating_after_s") is None:
        return "the long stream never started generating"
    h = holder_of(d)
    if h["status"] != 200 or not h.get("prompt_tokens"):
        return f"the long stream failed (status {h['status']}, error {d['holder'].get('error')})"
    return None


def _statuses(d) -> str:
    return ", ".join(f"{a.get('status')} in {a.get('seconds', 0):.2f} s" for a in _answers(d))


def decide_long_prompt_alone(d):
    if why := _undecided(d):
        return verdict_if(None, why)
    h = holder_of(d)
    # "Answered in full": every token asked for, ended by the length limit (ignore_eos), then [DONE].
    whole = h.get("tokens") == HOLDER_TOKENS and h.get("finish_reason") == "length"
    return verdict_if(h["prompt_tokens"] > LIMIT and whole and h.get("done") and not h.get("errors"),
                      f"a prompt of {h['prompt_tokens']} tokens, sent alone with a limit of {LIMIT}: status "
                      f"{h['status']}, {h.get('tokens')} of {HOLDER_TOKENS} tokens generated, finish reason "
                      f"{h.get('finish_reason')}, [DONE] {'came' if h.get('done') else 'missing'}")


def decide_generating_free(d):
    if why := _undecided(d):
        return verdict_if(None, why)
    h, b = holder_of(d), d["burst_answers"]
    # Admission is decided on arrival: the refusals' answer times bound it (at most REFUSED_WITHIN_S).
    decided_by = b["burst_sent_s"] + max([a.get("seconds", 0) for a in _answers(d) if a.get("status") != 200],
                                         default=REFUSED_WITHIN_S)
    generating = h.get("last_text_s") is not None and h["last_text_s"] > decided_by
    return verdict_if(bool(_admitted(d)) and generating,
                      f"the {h['prompt_tokens']}-token prompt's last token came {h.get('last_text_s')} s after it "
                      f"was sent; the burst went at {b['burst_sent_s']} s and was decided by {decided_by:.2f} s: "
                      f"{len(_admitted(d))} of {BURST} admitted")


def decide_cut_after_crossing(d):
    import math
    if why := _undecided(d):
        return verdict_if(None, why)
    admitted = _admitted(d)
    if not admitted or len(admitted) == BURST:
        return verdict_if(None, "the burst needs admitted and refused requests: " + _statuses(d))
    each = {a.get("prompt_tokens") for a in admitted}
    if len(each) != 1 or None in each:
        return verdict_if(None, f"the admitted prompts do not count the same tokens: {sorted(map(str, each))}")
    p = each.pop()
    crossing = math.ceil(LIMIT / p)  # admitted while the backlog before each is under the limit
    return verdict_if(len(admitted) == crossing,
                      f"prompts of {p} tokens against a limit of {LIMIT}: {len(admitted)} admitted (backlogs "
                      f"before them {', '.join(str(k * p) for k in range(len(admitted)))}); a limit on the backlog "
                      f"after admission would admit {LIMIT // p}")


def decide_refused_503(d):
    if why := _undecided(d):
        return verdict_if(None, why)
    refused = [a for a in _answers(d) if a.get("status") != 200]
    if not refused:
        return verdict_if(None, "nothing was refused")
    ok = all(a.get("status") == 503 and str(a.get("message") or "").startswith(BACKLOG)
             and a.get("retry_after") is None and a.get("seconds", 99) <= REFUSED_WITHIN_S for a in refused)
    return verdict_if(ok, f"{len(refused)} refused: " + "; ".join(
        f"{a.get('status')} in {a.get('seconds', 0):.3f} s, Retry-After {a.get('retry_after')}: {a.get('message')}"
        for a in refused[:2]))


def decide_counted(d):
    from verify.jobs.overload._admission import NO_COUNTER, counter_delta
    if why := _undecided(d):
        return verdict_if(None, why)
    b = d["burst_answers"]
    refused = sum(a.get("status") == 503 for a in _answers(d))
    if not refused:
        return verdict_if(None, "nothing was refused")
    if COUNTER not in b["counters_after"]:
        return verdict_if(False, f"{refused} refused; {NO_COUNTER}")
    counted = counter_delta(b, COUNTER)
    return verdict_if(counted == refused, f"{refused} refused; vllm:admission_rejections_total"
                                          f"{{reason=\"{REASON}\"}} rose by {counted:.0f}")


JOB = Job(
    id="queued-tokens",
    title="Requests past --max-num-queued-tokens",
    question="With --max-num-queued-tokens set, which prompts count against the limit, which request is the "
             "first refused, and what does it get?",
    pages=("overload.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # the job launches a server with flags a release may not know
    collect=collect,
    claims=(
        Claim("queued-tokens.flag-known", "The server accepts --max-num-queued-tokens.", decide_flag_known),
        Claim("queued-tokens.long-prompt-alone", f"A prompt longer than the limit is admitted and answered in full "
              f"when no other prompt waits for prefill (limit {LIMIT}).", decide_long_prompt_alone),
        Claim("queued-tokens.generating-free", "A request that has started generating no longer counts: with a "
              "prompt longer than the limit being answered, new requests are still admitted.",
              decide_generating_free, timing=True),
        Claim("queued-tokens.cut-after-crossing", "The limit is checked against the prompts already waiting, "
              "before the new one is added: requests are admitted until the waiting prompts reach the limit, so "
              "the one that crosses it is admitted and the next is refused.", decide_cut_after_crossing),
        Claim("queued-tokens.refused-503", "A request past the limit gets HTTP 503 \"The engine has reached its "
              f"prefill token backlog limit...\" within {REFUSED_WITHIN_S} s, with no Retry-After header.",
              decide_refused_503, timing=True),
        Claim("queued-tokens.counted", "vllm:admission_rejections_total{reason=\"max_num_queued_tokens\"} counts "
              "every refusal.", decide_counted),
    ),
)
