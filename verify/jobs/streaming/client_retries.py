"""The openai client's default timeout and retries, read from the installed library; then retry amplification, measured."""

from __future__ import annotations

import re

from verify.job import Claim, Job, Verdict, verdict_if

SNIPPETS = ("streaming/client_settings.py",)
# Each copy runs until this timeout, and default retries make three copies: one second is still far
# shorter than the generation (MAX_TOKENS, some 20 s here), and far longer than the engine takes to
# abort a copy (about 0.1 s), which is what lets copies run one after another.
CLIENT_TIMEOUT_S = 1.0
MAX_TOKENS = 300  # several seconds of generation: longer than the client timeout


def _count_copies(ctx, client, marker: str) -> dict:
    import time

    import openai

    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    mark = ctx.server.log_size()
    before = metrics.read(ctx.server.url)
    # The engine's running count, every 50 ms: do the copies overlap, or run one after another?
    sampler = metrics.Sampler(ctx.server.url)
    sampler.start()
    t0 = time.perf_counter()
    error = None
    try:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": f"Tell a long story ({marker})."}],
                                       max_tokens=MAX_TOKENS, extra_body={"ignore_eos": True})
    except (openai.APITimeoutError, openai.APIConnectionError) as e:
        error = type(e).__name__
    client_seconds = time.perf_counter() - t0
    metrics.wait_idle(ctx.server.url)
    sampler.stop()
    generated = metrics.read(ctx.server.url)["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
    log = ctx.server.log_since(mark)
    added = [line for line in log if "Added request" in line]
    copies = len(added) if ctx.server.managed else None
    # What reached the server: the copies its log shows started; from outside (no log), the
    # metric samples (every 50 ms) in which the engine was running the call.
    reached = added if ctx.server.managed else [x for x in sampler.samples if x["num_requests_running"]]
    return capture.results("client-call", reached, error=error, expect_error=error == "APITimeoutError",
                           client_error=error, client_seconds=round(client_seconds, 3),
                           copies_started=copies,
                           max_running=max((x["num_requests_running"] for x in sampler.samples), default=None),
                           generated_tokens=generated,
                           log_lines=[line for line in log if "Added request" in line or re.search("abort", line, re.I)])


def collect(ctx) -> dict:
    import openai
    snippet = ctx.snippet(SNIPPETS[0])
    default = openai.OpenAI(base_url=ctx.base_url, api_key="EMPTY")
    data = {"openai_version": openai.__version__,
            "default_timeout": {"connect": default.timeout.connect, "read": default.timeout.read,
                                "write": default.timeout.write, "pool": default.timeout.pool},
            "default_max_retries": default.max_retries}
    default.close()
    retrying = openai.OpenAI(base_url=ctx.base_url, api_key="EMPTY", timeout=CLIENT_TIMEOUT_S)
    data["default_retries"] = _count_copies(ctx, retrying, "default retries")
    # The page's recommended client: explicit timeout, no automatic retries.
    deliberate = snippet.make_client(ctx.base_url, timeout=CLIENT_TIMEOUT_S)
    data["settings_snippet"] = {"timeout": str(deliberate.timeout), "max_retries": deliberate.max_retries}
    data["no_retries"] = _count_copies(ctx, deliberate, "max_retries=0")
    data["client_timeout_s"] = CLIENT_TIMEOUT_S
    return data


def decide_timeout(d):
    read = d["default_timeout"]["read"]
    return verdict_if(read is not None and read >= 600, f"openai {d['openai_version']}: default timeout "
                      f"{read:.0f} s to read, {d['default_timeout']['connect']:.0f} s to connect")


def decide_retries(d):
    return verdict_if(d["default_max_retries"] > 0, f"openai {d['openai_version']}: max_retries defaults to "
                                                    f"{d['default_max_retries']}")


def decide_amplification(d):
    a, b = d["default_retries"]["copies_started"], d["no_retries"]["copies_started"]
    if a is None or b is None:
        return Verdict("inconclusive", "copies are counted from the server log, which an external server does not share")
    return verdict_if(a > b == 1, f"with a {d['client_timeout_s']:.0f} s timeout on a longer generation, the server started "
                                  f"{a} copies of the request under default retries and {b} with max_retries=0")


def decide_sequential(d):
    r = d["default_retries"]
    if r["copies_started"] is None:
        return Verdict("inconclusive", "copies are counted from the server log, which an external server does not share")
    if r["copies_started"] < 2:
        return Verdict("inconclusive", f"only {r['copies_started']} copy started: no retry to compare")
    one_at_a_time = r["max_running"] == 1
    cut_short = r["generated_tokens"] < r["copies_started"] * MAX_TOKENS
    return verdict_if(one_at_a_time and cut_short,
                      f"{r['copies_started']} copies; at most {r['max_running']:.0f} running at once (metrics every "
                      f"50 ms); {r['generated_tokens']:.0f} tokens generated in all, against {MAX_TOKENS} per copy "
                      "had none been aborted when its client gave up")


JOB = Job(
    id="client-retries",
    title="The openai client's timeout and retries",
    question="What are the openai client's default timeout and max_retries, and how many copies of a request does "
             "a timed-out client make the server run?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("client-retries.default-timeout", "The openai client's default timeout is at least ten minutes.", decide_timeout),
        Claim("client-retries.retries-by-default", "The openai client retries failed requests by default.", decide_retries),
        Claim("client-retries.sequential-copies", "Straight to vLLM, the retried copies run one after another: each "
              "attempt is aborted when its client gives up, before the retry starts.", decide_sequential, timing=True),
        Claim("client-retries.amplification", "With default retries, a client timeout shorter than the generation makes "
              "the server run the same request several times.", decide_amplification, timing=True),
    ),
)
