"""How the evidence of the streaming article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

import json

from verify.jobs.streaming import (_cancellation, api_server_cpu, cancel_nginx_ignore_abort, chunk_shapes, finish_reasons,
                                   other_proxies, proxy_buffering, proxy_read_timeout, stream_timing, untrusted_output,
                                   wire_format)
from verify.site import charts, html
from verify.site.views import View


# The cancellation jobs built by verify/jobs/streaming/_cancellation.py, shown the same way.
def cancellation_table(record):
    rows = []
    for c in _cancellation.CLIENTS:
        t = record["data"]["trials"][c]
        rows.append([t["path"], c, f"{t['client_gone_at_s']:.2f} s",
                     "still running" if t["stop_after_disconnect_s"] is None else f"{t['stop_after_disconnect_s']:.2f} s",
                     f"{t['generated_tokens']:.0f} / {t['max_tokens']}",
                     f"{(t['kv_cache_usage_at_disconnect'] or 0) * 100:.2f} % → {t['kv_cache_usage_after'] * 100:.2f} %",
                     "; ".join(t["proxy_access_log"]) or "-"])
    return html.table(["path", "client", "client left at", "engine stopped after", "tokens generated",
                       "KV cache usage", "nginx access log ($msec $status $request_time ...)"], rows)


def cancellation_log(record):
    lines = [line for c in _cancellation.CLIENTS for line in record["data"]["trials"][c]["request_log_lines"]]
    return html.pre(lines or ["(no request log lines)"], "server log lines for the abandoned requests")


CANCELLATION = View(fragments={"table": cancellation_table, "log": cancellation_log})


# api-server-cpu
def api_server_cpu_table(record):
    import statistics
    d = record["data"]
    rows = []
    for c in api_server_cpu.LEVELS:
        for stream in (False, True):
            per = [api_server_cpu.cpu_per_token_ms(b) for b in api_server_cpu.batches_of(d, stream, c)]
            api, engine = [p["api"] for p in per], [p["engine"] for p in per]
            rows.append([c, "yes" if stream else "no", len(per), f"{statistics.median(api):.2f} ms",
                         f"{min(api):.2f} to {max(api):.2f} ms", f"{statistics.median(engine):.2f} ms",
                         f"{statistics.median(a / e for a, e in zip(api, engine)) * 100:.1f} %"])
    return html.table(["concurrency", "streamed", "batches", "API server CPU per token (median)", "min to max",
                       "engine CPU per token (core + worker, median)", "API server / engine (median)"], rows)


# cancel-nginx-ignore-abort
def cancel_nginx_ignore_abort_table(record):
    rows = []
    for name, (client, setup) in cancel_nginx_ignore_abort.TRIALS.items():
        t = record["data"]["trials"][name]
        rows.append([name, setup, client, f"{t['client_gone_at_s']:.2f} s",
                     "still running" if t["stop_after_disconnect_s"] is None else f"{t['stop_after_disconnect_s']:.2f} s",
                     f"{t['generated_tokens']:.0f} / {t['max_tokens']}",
                     "; ".join(t["proxy_access_log"]) or "-"])
    return html.table(["request", "nginx set-up", "client", "client left at", "engine stopped after",
                       "tokens generated", "nginx access log ($msec $status $request_time ...)"], rows)


# chunk-shapes
def chunk_shapes_table(record):
    rows = []
    for name, stream in record["data"]["streams"].items():
        s = chunk_shapes.chunk_shape(stream)
        token = record["data"]["finish_tokens"][name]
        rows.append([name, s["n_chunks"], s["completion_tokens"], repr(s["first_content"]), s["finish_reason"],
                     f"{token['token_ids']} {token['decoded_alone']!r}", repr(s["finish_text"]),
                     ", ".join(map(str, s["empty_mid"])) or "none"])
    return html.table(["prompt", "chunks with a choice", "completion_tokens", "first chunk content", "finish_reason",
                       "token on the finish chunk (decoded alone)", "text on the finish chunk",
                       "empty chunks mid-stream (index)"], rows)


# client-retries
def client_retries_table(record):
    d = record["data"]
    t = d["default_timeout"]
    return html.table(["", "value"], [
        ["openai version", d["openai_version"]],
        ["default timeout (connect / read / write / pool)", f"{t['connect']} / {t['read']} / {t['write']} / {t['pool']} s"],
        ["default max_retries", d["default_max_retries"]],
        [f"copies the server ran, default retries, {d['client_timeout_s']:.0f} s timeout",
         f"{d['default_retries']['copies_started']} (client gave up after {d['default_retries']['client_seconds']:.1f} s: "
         f"{d['default_retries']['client_error']})"],
        ["most copies running at once; tokens generated in all (default retries)",
         f"{d['default_retries'].get('max_running', 'n/a')}; {d['default_retries'].get('generated_tokens', 'n/a')}"],
        [f"copies the server ran, max_retries=0, {d['client_timeout_s']:.0f} s timeout",
         f"{d['no_retries']['copies_started']} (client gave up after {d['no_retries']['client_seconds']:.1f} s: "
         f"{d['no_retries']['client_error']})"],
    ])


# detokenisation
def detokenisation_chunks(record):
    rows = [[i, json.dumps(c["token_ids"]), repr(c.get("tokens_decoded_alone")), repr(c["content"]),
             c.get("finish_reason") or ""] for i, c in enumerate(record["data"]["chunks"])]
    return html.table(["chunk", "token ids", "each token decoded alone", "text sent", "finish_reason"], rows)


def detokenisation_clients(record):
    return html.table(["how the client rebuilt the text", "result"],
                      [[k, v] for k, v in record["data"]["results"].items()])


# finish-reasons
def _finish_reasons_tail(name, caption):
    def render_it(record):
        s = record["data"][name]
        lines = [i for i in s["lines"] if i["line"]][-3:]
        extra = [{"t": lines[-1]["t"] if lines else 0, "line": f"(connection error: {s['error']})"}] if s.get("error") else []
        return html.timed_transcript(lines + extra, caption)
    return render_it


# httpx-close
def httpx_close_table(record):
    d = record["data"]
    return html.table(["httpx", "close took", "engine stopped after close", "tokens generated"],
                      [[d["httpx_version"], html.ms(d["close_seconds"]),
                        "never" if d["engine_stopped_after_s"] is None else f"{d['engine_stopped_after_s']:.2f} s",
                        f"{d['generated_tokens']:.0f} / {d['max_tokens']}"]])


# other-proxies: proxy-buffering's table, over this job's paths.
def other_proxies_table(record):
    return _delivery_table(record, other_proxies.PATHS)


# probe-tls-default
def probe_tls_default_output(record):
    d = record["data"]
    return html.pre(d["run"]["lines"] + [f"(exit status {d['run']['exit_code']})"],
                    "the probe's table, through nginx with default settings and TLS termination (captured)")


# proxy-buffering
def proxy_buffering_table(record):
    return _delivery_table(record, proxy_buffering.PATHS)


def _delivery_table(record, paths):
    """How each path delivered the stream: proxy-buffering's table, and other-proxies' over its own paths."""
    d = record["data"]
    rows = []
    for path in paths:
        x = proxy_buffering.delivery(d["captures"][path])
        server = [html.ms(proxy_buffering.server_seconds(d, path, m)) if "server_side" in d else "n/a"
                  for m in proxy_buffering.SERVER_SIDE]
        rows.append([path, x["events"], x["deliveries"], html.ms(x["ttft"]), html.ms(x["e2e"]), *server])
    return html.table(["path", "SSE events", "separate deliveries (lines > 5 ms apart)", "first text seen by client",
                       "last line", "server's TTFT", "server's e2e"], rows) + _earlier_attempts(d)


def _earlier_attempts(d) -> str:
    """Captures that failed and were tried again: what came back, and what the proxy logged then."""
    tried = [(path, a) for path, attempts in (d.get("earlier_attempts") or {}).items() for a in attempts]
    if not tried:
        return ""
    rows = [[path, a["attempt"], a["why"], a["stream"].get("status"), html.ms(a["stream"].get("ended_s")),
             " | ".join(a["proxy_log"]) or "(nothing logged)"] for path, a in tried]
    return html.table(["path tried again", "attempt", "why it did not count", "status", "ended after",
                       "the proxy's log at the time"], rows)


# proxy-read-timeout
def proxy_read_timeout_table(record):
    d = record["data"]
    n = d["tokens"]
    labels = {"calibration": f"stream, {proxy_read_timeout.CALIBRATION_TOKENS} tokens, directly "
                             "(measures the gap between tokens)",
              "long_stream": f"stream, {n['long_stream']} tokens, through nginx",
              "slow_first_token_direct": "stream, long prompt, directly (no proxy)",
              "slow_first_token": "stream, long prompt, through nginx",
              "non_streaming_direct": f"non-streaming, {n['non_streaming']} tokens, directly (no proxy)",
              "non_streaming": f"non-streaming, {n['non_streaming']} tokens, through nginx"}
    rows = []
    for key, label in labels.items():
        t = proxy_read_timeout.timing_of(d[key])
        rows.append([label, t["status"], html.ms(t["first_text"]), html.ms(t["max_gap"]),
                     html.ms(t["end"]), "yes" if t["done"] else "no"])
    return html.table([f"request (read timeout {d['timeout_s']:.0f} s)", "HTTP status", "first text",
                       "longest gap between events", "response ended", "[DONE]"], rows)


# stream-timing
def stream_timing_table(record):
    sm = stream_timing.summaries_of(record["data"])
    def row(label, s, unit_ms=True):
        f = (lambda x: f"{x * 1000:.1f} ms") if unit_ms else (lambda x: f"{x:.3f} s")
        return [label, f(s["median"]), f"{f(s['p25'])} to {f(s['p75'])}", f"{f(s['min'])} to {f(s['max'])}", s["n"]]
    rows = [row("E2E, non-streaming", sm["e2e_non_streaming"], False), row("E2E, streaming", sm["e2e_streaming"], False),
            row("TTFT (streaming only)", sm["ttft"]), row("ITL, mean per request (streaming only)", sm["itl"])]
    return html.table(["measure", "median", "p25 to p75", "min to max", "trials"], rows)


def stream_timing_chart(record) -> charts.Timeline:
    """The letter and the phone call, drawn from one trial of each mode (the middle one recorded)."""
    d = record["data"]["trials"]
    letter = d["non_streaming"][len(d["non_streaming"]) // 2]
    call = d["streaming"][len(d["streaming"]) // 2]
    marks = () if call["ttft"] is None else (charts.Mark(call["ttft"], f"TTFT {call['ttft'] * 1000:.0f} ms"),)
    return charts.Timeline(
        title="When the answer reached the client, without and with streaming (the same request)",
        x_label="seconds after sending",
        rows=(charts.Span("non-streaming: the whole answer arrives at once", 0.0, letter["e2e"], tone=1,
                          events=(letter["e2e"],), text=f"{letter['e2e']:.2f} s"),
              charts.Span(f"streaming: each dot is one of {len(call['arrivals'])} chunks", 0.0, call["e2e"], tone=0,
                          events=tuple(call["arrivals"]), text=f"{call['e2e']:.2f} s")),
        marks=marks)


# untrusted-output
def untrusted_output_text(record):
    return html.pre([untrusted_output.streamed_text_of(record["data"])], "the text of the captured stream, shown as text",
                    "untrusted-output")


# usage-in-stream
def usage_in_stream_final_chunk(record):
    lines = [i for i in record["data"]["raw_with"]["lines"] if i["line"]][-3:]
    return html.timed_transcript(lines, "the end of a stream with stream_options.include_usage (captured)")


# wire-format
def _wire_format_transcript(name):
    def render_it(record):
        lines = record["data"][name]["lines"]
        return html.timed_transcript(lines, f"curl -N, /v1/{'chat/completions' if name == 'chat' else 'completions'}: "
                                            "each line with its arrival time")
    return render_it


def wire_format_buffering_table(record):
    d = wire_format.spreads(record["data"])
    rows = []
    for key, label in (("with_n_terminal", "-N, in a terminal"), ("without_n_terminal", "no -N, in a terminal"),
                       ("with_n_pipe", "-N, into a pipe"), ("without_n_pipe", "no -N, into a pipe")):
        rows.append([label, html.ms(wire_format.upper_median(d[key])), ", ".join(html.ms(x) for x in d[key])])
    return html.table(["curl output goes", "median spread (first to last data: line)", "every run"], rows)


VIEWS = {
    "api-server-cpu": View(fragments={"table": api_server_cpu_table}),
    "cancel-caddy-default": CANCELLATION,
    "cancel-direct": CANCELLATION,
    "cancel-haproxy-default": CANCELLATION,
    "cancel-nginx-default": CANCELLATION,
    "cancel-nginx-ignore-abort": View(fragments={"table": cancel_nginx_ignore_abort_table}),
    "cancel-nginx-streaming": CANCELLATION,
    "cancel-nginx-tls": CANCELLATION,
    "chunk-shapes": View(fragments={"table": chunk_shapes_table}),
    "client-retries": View(fragments={"table": client_retries_table}),
    "detokenisation": View(fragments={"chunks": detokenisation_chunks, "clients": detokenisation_clients}),
    "finish-reasons": View(fragments={
        "stop": _finish_reasons_tail("stop", "end of a stream the model finished"),
        "length": _finish_reasons_tail("length", "end of a stream cut by max_tokens=8"),
        "broken": _finish_reasons_tail("broken", f"end of a stream whose proxy stopped {finish_reasons.CUT_AFTER_S} s in")}),
    "httpx-close": View(fragments={"table": httpx_close_table}),
    "other-proxies": View(fragments={"table": other_proxies_table}),
    "probe-tls-default": View(fragments={"output": probe_tls_default_output}),
    "proxy-buffering": View(fragments={"table": proxy_buffering_table}),
    "proxy-read-timeout": View(fragments={"table": proxy_read_timeout_table}),
    "stream-timing": View(fragments={"table": stream_timing_table}, charts={"timeline": stream_timing_chart}),
    "untrusted-output": View(fragments={"text": untrusted_output_text}),
    "usage-in-stream": View(fragments={"final-chunk": usage_in_stream_final_chunk}),
    "wire-format": View(fragments={"chat-transcript": _wire_format_transcript("chat"),
                                   "completions-transcript": _wire_format_transcript("completions"),
                                   "buffering-table": wire_format_buffering_table}),
}
