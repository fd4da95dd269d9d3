"""The openai client's default timeout and retries, read from the installed library; then retry amplification, measured."""

from __future__ import annotations

import re

from verify.site import html as render
from verify.job import Claim, Job, Verdict, verdict_if

SNIPPETS = ("streaming/client_settings.py",)
CLIENT_TIMEOUT_S = 2.0
MAX_TOKENS = 300  # several seconds of generation: longer than the client timeout


def _count_copies(ctx, client, marker: str) -> dict:
    import time

    import openai

    from verify.measure import metrics
    metrics.wait_idle(ctx.server.url)
    mark = ctx.server.log_size()
    t0 = time.perf_counter()
    error = None
    try:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": f"Tell a long story ({marker})."}],
                                       max_tokens=MAX_TOKENS, extra_body={"ignore_eos": True})
    except (openai.APITimeoutError, openai.APIConnectionError) as e:
        error = type(e).__name__
    client_seconds = time.perf_counter() - t0
    metrics.wait_idle(ctx.server.url)
    log = ctx.server.log_since(mark)
    added = [line for line in log if "Added request" in line]
    copies = len(added) if ctx.server.managed else None
    return {"capture": "client-call", "error": error, "expect_error": error == "APITimeoutError",
            # The copies the server started; from outside, only that the call came back at all.
            "events": copies if copies is not None else 1,
            "client_error": error, "client_seconds": round(client_seconds, 3),
            "copies_started": copies,
            "log_lines": [line for line in log if "Added request" in line or re.search("abort", line, re.I)]}


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


def fragment(record):
    d = record["data"]
    t = d["default_timeout"]
    return render.table(["", "value"], [
        ["openai version", d["openai_version"]],
        ["default timeout (connect / read / write / pool)", f"{t['connect']} / {t['read']} / {t['write']} / {t['pool']} s"],
        ["default max_retries", d["default_max_retries"]],
        [f"copies the server ran, default retries, {d['client_timeout_s']:.0f} s timeout",
         f"{d['default_retries']['copies_started']} (client gave up after {d['default_retries']['client_seconds']:.1f} s: "
         f"{d['default_retries']['client_error']})"],
        [f"copies the server ran, max_retries=0, {d['client_timeout_s']:.0f} s timeout",
         f"{d['no_retries']['copies_started']} (client gave up after {d['no_retries']['client_seconds']:.1f} s: "
         f"{d['no_retries']['client_error']})"],
    ])


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
        Claim("client-retries.amplification", "With default retries, a client timeout shorter than the generation makes "
              "the server run the same request several times.", decide_amplification),
    ),
    fragments={"table": fragment},
)
