"""One cancellation trial: a client abandons a long stream; watch the engine until it stops.

The engine is watched through its own metrics (running requests, KV cache
usage, generated-token counter), sampled every 50 ms from before the request
until the running count is back to zero, so the moment the engine lets go is
seen as soon as it happens rather than after a fixed wait. Its log lines and
the proxy's access log line are kept too.
"""

from __future__ import annotations

import re
import ssl
import time

import httpx
from openai import OpenAI

from verify.measure import metrics

ABANDON_AFTER_S = 2.0
# Longest the engine can take to finish the request on its own; past this, give up watching.
WATCH_LIMIT_S = 90.0


def abandon(ctx, client_kind: str, base_url: str, tls_ca: str | None, max_tokens: int) -> float:
    """Run the page's cancellation snippet for client_kind; returns when the client has let go."""
    body_extra = {"ignore_eos": True}  # keep generating to max_tokens unless cancelled
    tls = ssl.create_default_context(cafile=tls_ca) if tls_ca else None
    if client_kind == "openai-non-streaming":
        # The page's deliberate client: its timeout is how it gives up on a request with no stream.
        import openai
        snippet = ctx.snippet("streaming/client_settings.py")
        client = snippet.make_client(base_url, timeout=ABANDON_AFTER_S)
        if tls:
            client = client.with_options(http_client=httpx.Client(verify=tls))
        try:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "Tell a long story."}],
                                           max_tokens=max_tokens, extra_body=body_extra)
        except openai.APITimeoutError:
            pass
        finally:
            client.close()
        return time.perf_counter()
    if client_kind == "httpx":
        snippet = ctx.snippet("streaming/cancel_httpx.py")
        body = {**snippet.BODY, "max_tokens": max_tokens, **body_extra}
        return snippet.abandon_after(ABANDON_AFTER_S, base_url=base_url, body=body,
                                     **({"verify": tls} if tls else {}))
    snippet = ctx.snippet("streaming/cancel_openai.py")
    http_client = httpx.Client(verify=tls) if tls else None
    client = OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0,
                    **({"http_client": http_client} if http_client else {}))
    try:
        return snippet.abandon_after(ABANDON_AFTER_S, client, max_tokens=max_tokens, **body_extra)
    finally:
        client.close()


# A trial that did not catch the request generating when the client left shows nothing about
# cancellation (a cold engine, or a scrape that came too late); it is repeated up to this many
# times in all, and the record keeps every attempt.
ATTEMPTS = 3


def trial(ctx, client_kind: str, proxy_setup: str | None, max_tokens: int, live=None) -> dict:
    """The trial, repeated while live(trial) says why it shows nothing; earlier attempts are kept in the last."""
    earlier = []
    while True:
        t = _attempt(ctx, client_kind, proxy_setup, max_tokens)
        why = live(t) if live else None
        if not why or len(earlier) + 1 >= ATTEMPTS:
            return {**t, "attempts": len(earlier) + 1, "earlier_attempts": earlier}
        earlier.append({**t, "not_live": why})


def _attempt(ctx, client_kind: str, proxy_setup: str | None, max_tokens: int) -> dict:
    server = ctx.server
    metrics.wait_idle(server.url)
    proxy = ctx.proxy(proxy_setup) if proxy_setup else None
    base_url = (proxy.url + "/v1") if proxy else ctx.base_url
    before = metrics.read(server.url)
    log_mark = server.log_size()
    access_mark = len(proxy.access_log()) if proxy else 0
    sampler = metrics.Sampler(server.url)
    sampler.start()
    t_gone = abandon(ctx, client_kind, base_url, str(proxy.ca_file) if proxy and proxy.ca_file else None, max_tokens)
    gone_at = round(t_gone - sampler.t0, 3)
    # Watch until the engine has nothing running (or the generation could have finished by itself).
    deadline = time.perf_counter() + WATCH_LIMIT_S
    while time.perf_counter() < deadline:
        last = sampler.samples[-1] if sampler.samples else None
        if (last and last["t"] > gone_at and last["num_requests_running"] == 0) or not sampler.is_alive():
            break
        time.sleep(0.02)
    sampler.stop()
    after = metrics.read(server.url)
    stopped = next((s["t"] for s in sampler.samples if s["t"] > gone_at and s["num_requests_running"] == 0), None)
    log = server.log_since(log_mark)
    # The engine's state when the client left: the last scrape answered before then.
    at_gone = max((s for s in sampler.samples if s["t"] <= gone_at), key=lambda s: s["t"], default={})
    time.sleep(0.2)  # nginx writes its access log line when it closes the request
    generated = after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
    return {
        # A trial whose stream never got going (no token generated) is a failed capture.
        "capture": "cancel-trial", "events": int(generated), "error": sampler.error,
        "client": client_kind, "path": proxy_setup or "direct",
        "client_gone_at_s": gone_at,
        "engine_stopped_at_s": stopped,
        "stop_after_disconnect_s": round(stopped - gone_at, 3) if stopped is not None else None,
        "generated_tokens": generated,
        "max_tokens": max_tokens,
        "running_at_disconnect": at_gone.get("num_requests_running"),
        # How old that reading was when the client left (None: no reading before then).
        "disconnect_reading_age_s": round(gone_at - at_gone["t"], 3) if at_gone else None,
        # Tokens generated by the time the client left: a request that never got going proves nothing.
        "generated_at_disconnect": (at_gone["generation_tokens_total"] - before["vllm:generation_tokens_total"]
                                    if at_gone else None),
        "kv_cache_usage_before": sampler.samples[0]["kv_cache_usage_perc"] if sampler.samples else None,
        "kv_cache_usage_at_disconnect": at_gone.get("kv_cache_usage_perc"),
        "kv_cache_usage_after": after["vllm:kv_cache_usage_perc"],
        "samples": sampler.samples,
        "server_log_read": bool(server.managed),  # an external server's log is not ours to read
        "abort_log_lines": [line for line in log if re.search(r"abort", line, re.I)],
        "request_log_lines": [line for line in log if "Added request" in line or "Finished request" in line
                              or re.search(r"abort", line, re.I)],
        "proxy_access_log": proxy.access_log()[access_mark:] if proxy else [],
    }
