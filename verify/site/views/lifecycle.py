"""How the evidence of the lifecycle article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.lifecycle import (_endings, max_num_seqs_queue, request_phases, server_processes, tokenisation,
                                   ttft_clocks)
from verify.site import charts, html
from verify.site.views import View


# request-endings and request-endings-quiet (verify/jobs/lifecycle/_endings.py), shown the same way.
def request_endings_metrics(record):
    d = record["data"]
    rows = []
    for e in _endings.ENDINGS:
        x = d["endings"][e]
        moved = x["metrics_delta"]
        success = ", ".join(f"{k.split('=')[1].rstrip('}')} +{v:.0f}" for k, v in moved.items()
                            if k.startswith("vllm:request_success_total")) or "unchanged"
        rows.append([e, x["status"], success, f"+{moved.get(_endings.E2E_COUNT, 0):.0f}",
                     f"+{moved.get('vllm:generation_tokens_total', 0):.0f}", len(x["log"])])
    return html.table(["ending", "HTTP status", "request_success_total by finished_reason",
                       "e2e latency observations", "tokens generated", "request log lines"], rows)


def request_endings_log(record):
    lines = [line for e in _endings.ENDINGS for line in record["data"]["endings"][e]["log"]]
    return html.pre(lines or ["(no request-level log lines)"], "request-level log lines for the four endings")


REQUEST_ENDINGS = View(fragments={"metrics": request_endings_metrics, "log": request_endings_log})


# max-num-seqs-queue: requests beyond --max-num-seqs, the timings and the queue.
def max_num_seqs_queue_timings(record):
    d = record["data"]
    rows = [[i + 1, f"{x['ttft']:.2f} s", f"{x['e2e']:.2f} s", x["tokens"]]
            for i, x in enumerate(max_num_seqs_queue.request_timings(d))]
    return html.table(["request (by first text)", "first text after", "last event after", "text chunks"], rows)


def max_num_seqs_queue_queue(record):
    samples = record["data"]["samples"]
    shown = [s for i, s in enumerate(samples) if i == 0 or
             (s["num_requests_running"], s["num_requests_waiting"]) !=
             (samples[i - 1]["num_requests_running"], samples[i - 1]["num_requests_waiting"])]
    return html.table(["time", "running", "waiting"],
                      [[f"{s['t']:.2f} s", f"{s['num_requests_running']:.0f}", f"{s['num_requests_waiting']:.0f}"]
                       for s in shown])


# request-phases: the median trial's histograms as a table and as a timeline.
def _median_trial(d):
    ts = sorted(d["trials"], key=lambda t: request_phases.phase_seconds(t, "e2e_request_latency_seconds"))
    return ts[len(ts) // 2]


def request_phases_table(record):
    t = _median_trial(record["data"])
    rows = [[p, f"{t['phases'][p]['observations']:.0f}", html.ms(request_phases.phase_seconds(t, p))]
            for p in request_phases.PHASES]
    rows.append(["(e2e minus queue and inference: the API server's part)", "", html.ms(request_phases.api_server_time(t))])
    rows.append(["(the client's own clock, send to last byte)", "", html.ms(t["client_e2e_s"])])
    return html.table(["histogram (vllm:...)", "observations added", "seconds added"], rows)


def _ms(seconds: float) -> str:
    digits = 2 if seconds < 0.001 else 1 if seconds < 0.01 else 0
    return f"{seconds * 1000:.{digits}f} ms"


def request_phases_timeline_chart(record) -> charts.Timeline:
    """One request (the median of the trials), its phases laid end to end as the server measured them."""
    t = _median_trial(record["data"])
    client, e2e = t["client_e2e_s"], request_phases.phase_seconds(t, "e2e_request_latency_seconds")
    queue, prefill, decode = (request_phases.phase_seconds(t, p) for p in request_phases.PHASES[:3])
    ttft = request_phases.phase_seconds(t, "time_to_first_token_seconds")
    # The server's clock starts when the request reaches the API server; where that falls inside the
    # client's wait is not measured, so the server's bars start after half the client's extra time.
    s0 = (client - e2e) / 2
    rows = [("client: send to last byte", 0.0, client, 3), ("server: e2e latency", s0, e2e, 2),
            ("queue", s0, queue, 4), ("prefill", s0 + queue, prefill, 1), ("decode", s0 + queue + prefill, decode, 0)]
    return charts.Timeline(
        title="One request's time, as the client and the server measured it",
        x_label="ms", scale=1000,
        rows=tuple(charts.Span(label, start, dur, tone=tone, text=_ms(dur)) for label, start, dur, tone in rows),
        marks=(charts.Mark(s0 + ttft, f"server TTFT {_ms(ttft)}", tone=1),),
        note=f"Lengths are measured. Where the server's clock starts inside the client's wait is not: the server's "
             f"bars are drawn in the middle of the client's extra {_ms(client - e2e)}.")


# server-processes
def server_processes_table(record):
    d = record["data"]
    cpu = {p["pid"]: p["cpu_s"] for p in d["before"]}
    role_of = {p["pid"]: role for role, p in server_processes.process_roles(d["after"]).items()}
    rows = [[p["pid"], p["ppid"], p["name"], role_of.get(p["pid"], "helper"), f"{p['rss_mib']} MiB",
             f"{p['cpu_s'] - cpu.get(p['pid'], 0.0):.2f} s"] for p in d["after"]]
    return html.table(["pid", "parent", "name", "role", "resident memory",
                       f"CPU during one {d['generation']['max_tokens']}-token stream"], rows)


# tokenisation: the counts, and the chat template's output.
def tokenisation_table(record):
    rows = [[k, " / ".join(m["content"] for m in tokenisation.MESSAGES.get(k, [])) or k, r["counts"]["text_alone"],
             r["counts"]["with_chat_template"], r["usage"]["prompt_tokens"]]
            for k, r in record["data"]["requests"].items()]
    return html.table(["messages", "text", "/tokenize, text alone", "/tokenize, with chat template",
                       "usage.prompt_tokens"], rows)


def tokenisation_templated(record):
    return html.pre(record["data"]["templated_short_prompt"].splitlines(),
                    "what the model reads for the one message 'Say hi.' (the chat template's output)")


# ttft-clocks: server TTFT against client TTFT, per request.
def ttft_clocks_table(record):
    rows = []
    for i, t in enumerate(record["data"]["trials"]):
        rows.append([i + 1, html.ms(ttft_clocks.client_ttft(t)),
                     html.ms(ttft_clocks.server_clock(t, "time_to_first_token_seconds")),
                     html.ms(ttft_clocks.server_clock(t, "request_queue_time_seconds")),
                     html.ms(ttft_clocks.server_clock(t, "request_prefill_time_seconds"))])
    return html.table(["request", "client TTFT (first text chunk)", "server TTFT histogram", "queue", "prefill"], rows)


VIEWS = {
    "max-num-seqs-queue": View(fragments={"timings": max_num_seqs_queue_timings,
                                          "queue": max_num_seqs_queue_queue}),
    "request-endings": REQUEST_ENDINGS,
    "request-endings-quiet": REQUEST_ENDINGS,
    "request-phases": View(fragments={"table": request_phases_table},
                           charts={"timeline": request_phases_timeline_chart}),
    "server-processes": View(fragments={"table": server_processes_table}),
    "tokenisation": View(fragments={"table": tokenisation_table, "templated": tokenisation_templated}),
    "ttft-clocks": View(fragments={"table": ttft_clocks_table}),
}
