"""Streaming article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

import copy
import json
import re
from typing import Callable

from tests.rules._records import data_times


def abort_not_logged(d: dict) -> None:
    """cancel-direct.log-line: the server stops the request without logging it: no abort line in its log."""
    for trial in d["trials"].values():
        trial["abort_log_lines"] = []
        trial["request_log_lines"] = [x for x in trial["request_log_lines"] if not re.search("abort", x, re.I)]


def finish_reason_rides_on_last_text(d: dict) -> None:
    """chunk-shapes.finish-on-last-text: the server puts finish_reason on the chunk of the last text and
    sends no empty finish chunk after it."""
    for stream in d["streams"].values():
        lines = stream["lines"]
        events = [(i, json.loads(x["line"][6:])) for i, x in enumerate(lines) if x["line"].startswith("data: {")]
        events = [(i, c) for i, c in events if c.get("choices")]
        finish = next(k for k, (_, c) in enumerate(events) if c["choices"][0].get("finish_reason"))
        finish_line, finish_chunk = events[finish]
        if finish_chunk["choices"][0]["delta"].get("content"):
            continue
        text_line, text_chunk = next((i, c) for i, c in reversed(events[:finish]) if c["choices"][0]["delta"].get("content"))
        for key in ("finish_reason", "stop_reason"):
            if key in finish_chunk["choices"][0]:
                text_chunk["choices"][0][key] = finish_chunk["choices"][0][key]
        lines[text_line]["line"] = "data: " + json.dumps(text_chunk)
        end = finish_line + 1
        if end < len(lines) and lines[end]["line"] == "":  # the blank line that ends the event
            end += 1
        del lines[finish_line:end]


def tls_proxy_relays_each_event(d: dict) -> None:
    """proxy-buffering.nginx-tls: nginx with TLS passes each event on as it comes: its lines arrive when the
    direct path's did."""
    direct = data_times(d["captures"]["direct"]["lines"])
    k, t = -1, None
    for line in d["captures"]["nginx-tls"]["lines"]:
        if line["line"].startswith("data: "):
            k += 1
            t = direct[min(k, len(direct) - 1)]
        if t is not None:
            line["t"] = t


def _relays_each_event(path: str, d: dict) -> None:
    """A proxy that passes each event on as it comes: the path's lines arrive when the direct path's did."""
    direct = data_times(d["captures"]["direct"]["lines"])
    k, t = -1, None
    for line in d["captures"][path]["lines"]:
        if line["line"].startswith("data: "):
            k += 1
            t = direct[min(k, len(direct) - 1)]
        if t is not None:
            line["t"] = t


def _holds_events_in_blocks(path: str, d: dict, block: int = 10) -> None:
    """A proxy that holds the stream back: each run of `block` lines arrives at once, with its last line."""
    lines = d["captures"][path]["lines"]
    for start in range(0, len(lines), block):
        group = lines[start:start + block]
        for line in group:
            line["t"] = group[-1]["t"]


def nginx_tls_streaming_holds_blocks(d: dict) -> None:
    """proxy-buffering.nginx-tls-streaming: nginx with TLS and the streaming settings holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("nginx-tls-streaming", d)


def caddy_default_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-default: Caddy at its defaults holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-default", d)


def caddy_tls_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-tls: Caddy with TLS holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-tls", d)


def caddy_streaming_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-streaming: Caddy with flush_interval -1 still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-streaming", d)


def haproxy_tls_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-tls: HAProxy with TLS holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-tls", d)


def haproxy_streaming_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-streaming: HAProxy with http-no-delay still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-streaming", d)


def haproxy_no_delay_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-no-delay: HAProxy with only http-no-delay still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-no-delay", d)


def haproxy_default_relays_each_event(d: dict) -> None:
    """other-proxies.haproxy-default: HAProxy at its defaults passes each event on as it comes: its lines
    arrive when the direct path's did."""
    _relays_each_event("haproxy-default", d)


def proxy_waits_for_slow_first_token(d: dict) -> None:
    """proxy-read-timeout.slow-first-token-cut: nginx waits for the late first token: the stream through it
    arrives whole, as it did directly."""
    via, direct = d["slow_first_token"], d["slow_first_token_direct"]
    via.update(status=200, error=None, ended_s=direct["ended_s"], body_lines=copy.deepcopy(direct["lines"]))


def first_token_waits_as_long_as_decode(d: dict) -> None:
    """stream-timing.ttft-fraction: the first token comes late (a prefill or a queue wait as long as the
    whole decode): every line of each streamed trial arrives that much later."""
    for trial in d["trials"]["streaming"]:
        delay = trial["e2e"] - trial["ttft"]
        trial["ttft"] = round(trial["ttft"] + delay, 4)
        trial["e2e"] = round(trial["e2e"] + delay, 4)
        trial["arrivals"] = [round(t + delay, 4) for t in trial["arrivals"]]


def _burst_without_n(d: dict, mode: str) -> None:
    """curl without -N holds the whole stream back and writes it in one read when it ends. Where the record
    has fewer runs with -N (collect() skips them once those without -N settle "no burst"), they are made
    up with copies of its first: with bursts without -N, collect() would have run them."""
    with_n = d["runs"][f"with_n_{mode}"]
    while with_n and len(with_n) < len(d["runs"][f"without_n_{mode}"]):
        with_n.append(copy.deepcopy(with_n[0]))
    for run in d["runs"][f"without_n_{mode}"]:
        last = max(x["t"] for x in run["lines"])
        for line in run["lines"]:
            line["t"] = last
        if "reads" in run:
            run["reads"] = 1


def terminal_burst_without_n(d: dict) -> None:
    """wire-format.no-n-terminal-burst: in a terminal, curl without -N shows the stream in one burst."""
    _burst_without_n(d, "terminal")


def pipe_burst_without_n(d: dict) -> None:
    """wire-format.no-n-pipe-burst: into a pipe, curl without -N delivers the stream in one burst."""
    _burst_without_n(d, "pipe")


def streaming_costs_the_api_server_nothing(d: dict) -> None:
    """api-server-cpu.streaming-costs-more: every streamed batch costs the API server exactly what the
    same non-streamed batch of its round did (its process clock's reading set to match)."""
    for b in d["batches"]:
        if b["stream"]:
            twin = next(n for n in d["batches"] if not n["stream"] and n["round"] == b["round"]
                        and n["concurrency"] == b["concurrency"])
            used = twin["api_clock"]["after_s"] - twin["api_clock"]["before_s"]
            b["api_clock"]["after_s"] = b["api_clock"]["before_s"] + used * b["generated_tokens"] / twin["generated_tokens"]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "api-server-cpu.streaming-costs-more": streaming_costs_the_api_server_nothing,
    "cancel-direct.log-line": abort_not_logged,
    "chunk-shapes.finish-on-last-text": finish_reason_rides_on_last_text,
    "proxy-buffering.nginx-tls": tls_proxy_relays_each_event,
    "proxy-buffering.nginx-tls-streaming": nginx_tls_streaming_holds_blocks,
    "other-proxies.caddy-default": caddy_default_holds_blocks,
    "other-proxies.caddy-tls": caddy_tls_holds_blocks,
    "other-proxies.caddy-streaming": caddy_streaming_holds_blocks,
    "other-proxies.haproxy-default": haproxy_default_relays_each_event,
    "other-proxies.haproxy-no-delay": haproxy_no_delay_holds_blocks,
    "other-proxies.haproxy-tls": haproxy_tls_holds_blocks,
    "other-proxies.haproxy-streaming": haproxy_streaming_holds_blocks,
    "proxy-read-timeout.slow-first-token-cut": proxy_waits_for_slow_first_token,
    "stream-timing.ttft-fraction": first_token_waits_as_long_as_decode,
    "wire-format.no-n-terminal-burst": terminal_burst_without_n,
    "wire-format.no-n-pipe-burst": pipe_burst_without_n,
}
