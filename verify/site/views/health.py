"""How the evidence of the health article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.health._drain import after_signal, streams
from verify.jobs.health._watch import tokens_and_end
from verify.site import charts, html
from verify.site.views import View


# Poll series shown as runs: consecutive polls that saw the same thing become one row.
def _poll_runs(polls: list[dict], fields: tuple[str, ...]) -> list[list[str]]:
    """Rows of [from, to, polls, field values...] for consecutive polls with equal fields."""
    rows: list[list] = []
    for p in polls:
        seen = [str(p.get(f, "")) for f in fields]
        if rows and rows[-1][3:] == seen:
            rows[-1][1], rows[-1][2] = p["t"], rows[-1][2] + 1
        else:
            rows.append([p["t"], p["t"], 1, *seen])
    return [[f"{a:.2f}", f"{b:.2f}", str(n), *rest] for a, b, n, *rest in rows]


# drain-grace and drain-abort, shown the same way: the polls, what each stream and request got, and a timeline
# of every stream's text against SIGTERM and the process's exit (drain-abort: for each of its trials).
def _drain_stream(d, s) -> str:
    return (f"{s['chunks']} text chunks, the last {after_signal(s, s['last_text_s'])} s after SIGTERM; usage "
            f"{s['tokens']} of {d['stream_tokens']} tokens, finish reason {s['finish_reason']}, "
            f"{len(s['errors'])} error event(s), [DONE] {'sent' if s['done'] else 'not sent'}, ended "
            f"{after_signal(s, s['ended_s'])} s after SIGTERM"
            + (f" (client: {s['client_error']})" if s["client_error"] else ""))


def _drain_request(r) -> str:
    if r is None:
        return "not sent: the server had exited"
    return (f"at {r['t']:.2f} s: {r['status']}" + (f", finish reason {r['finish_reason']}" if r.get("finish_reason") else "")
            + (f": {r['error']}" if r.get("error") else ""))


def drain_grace_timeline(record) -> str:
    return _drain_trial(record["data"])


def drain_abort_timeline(record) -> str:
    return "".join(f'<p class="evidence-caption">Trial {i + 1}</p>' + _drain_trial(t)
                   for i, t in enumerate(record["data"]["trials"]))


def _drain_trial(d) -> str:
    drain = d["drain"]
    polls = html.table(["from (s after SIGTERM)", "to", "polls", "/health", "/v1/models", "/health through nginx"],
                       _poll_runs(drain["polls"], ("health", "models", "health_nginx")))
    rows = [*([f"stream {s['path']}", _drain_stream(d, s)] for s in streams(d)),
            *([f"a new completion {path}", _drain_request(r)] for path, r in (drain["new_requests"] or {}).items()),
            ["the process", f"exited {drain['exit_s']} s after SIGTERM, code {drain['server_exit_code']}"
             if drain["exit_s"] is not None else "still running when the job stopped waiting"]]
    return polls + html.table(["", "what came back"], rows)


def _arrivals(raw: dict, start: float) -> tuple[float, ...]:
    return tuple(round(x["t"] + start, 3) for x in raw.get("lines", []) if str(x.get("line", "")).startswith("data: "))


def _drain_spans(d, label: str) -> tuple[list[charts.Span], float]:
    """The streams of one run, on a clock that starts when the first stream was sent; and SIGTERM on it."""
    delivered = streams(d)
    origin = min(s["offset_s"] for s in delivered)  # SIGTERM is at -origin on this clock
    out = []
    for s, raw in zip(delivered, d["drain"]["streams"]):
        start = s["offset_s"] - origin
        ending = ("finish reason " + s["finish_reason"]) if s["finish_reason"] else \
            "error event" if s["errors"] else "client gave up" if s["client_error"] else "cut"
        out.append(charts.Span(f"{label}stream {s['path']}: each dot is a data line", start, s["ended_s"],
                               tone=0 if s["finish_reason"] else 1, events=_arrivals(raw["stream"], start),
                               text=ending))
    exit_s = d["drain"]["exit_s"]
    out.append(charts.Span(f"{label}the server process, from SIGTERM", -origin, exit_s if exit_s is not None else 0.0,
                           tone=2, text=f"exited {exit_s:.1f} s after SIGTERM" if exit_s is not None else "still running"))
    return out, -origin


def drain_grace_streams_chart(record) -> charts.Timeline:
    d = record["data"]
    rows, sigterm = _drain_spans(d, "")
    return charts.Timeline(title="The streams in flight against SIGTERM and the process's exit",
                           x_label="seconds after the streams were sent", rows=tuple(rows),
                           marks=(charts.Mark(sigterm, "SIGTERM"),))


def drain_abort_streams_chart(record) -> charts.Timeline:
    rows, signals = [], []
    for i, t in enumerate(record["data"]["trials"]):
        trial_rows, sigterm = _drain_spans(t, f"trial {i + 1}, ")
        rows += trial_rows
        signals.append(sigterm)
    # Each trial's SIGTERM came the same time after its streams were sent, to a few ms: one mark.
    return charts.Timeline(title="The streams in flight against SIGTERM and each trial's exit",
                           x_label="seconds after the streams were sent", rows=tuple(rows),
                           marks=(charts.Mark(min(signals), "SIGTERM"),))


# health-probes
STARTUP_FIELDS = ("port", "health", "models", "completion")


def health_probes_startup(record) -> str:
    polls = record["data"]["startup"]["polls"]
    return html.table(["from (s after spawn)", "to", "polls", "port", "/health", "/v1/models", "completion"],
                      _poll_runs(polls, STARTUP_FIELDS))


def health_probes_stall(record) -> str:
    s = record["data"]["stall"]
    stream = tokens_and_end(s["stream_during"])
    metrics_keys = ("vllm:num_requests_running", "vllm:num_requests_waiting")
    rows = [["/health, polled every 0.5 s", ", ".join(str(p["health"]) for p in s["polls"])],
            ["a stream sent during the stall", f"HTTP {stream['status']}, {stream['chunks']} text chunks, "
                                               f"ended after {stream['ended_s']:.1f} s by: {stream['client_error']}"],
            ["/metrics before / during (running, waiting)",
             " / ".join(", ".join(f"{m[k]:.0f}" for k in metrics_keys) if isinstance(m, dict) else str(m)
                        for m in (s["metrics_before"], s["metrics_during"]))],
            ["a completion after SIGCONT", f"HTTP {s['after_continue']['status']}, {s['after_continue']['tokens']} "
                                           f"tokens, {s['after_continue_s']:.2f} s"]]
    return html.table([f"engine core stopped (SIGSTOP) for {record['data']['stall_s']:.0f} s", "what came back"], rows)


def _health_after_kill(polls: list[dict]) -> list[list[str]]:
    """/health's answers after the kill, one row per run of equal answers (it is polled every few
    hundredths of a second, so a row per poll would bury the moment the answer changed)."""
    rows, start = [], 0
    for i, p in enumerate(polls):
        if i + 1 < len(polls) and polls[i + 1]["health"] == p["health"]:
            continue
        first, n = polls[start], i - start + 1
        when = f"at {first['t']:.2f} s" if n == 1 else f"from {first['t']:.2f} to {p['t']:.2f} s ({n} polls)"
        rows.append([f"/health {when}", str(p["health"])])
        start = i + 1
    return rows


def health_probes_death(record) -> str:
    d = record["data"]["death"]
    s = tokens_and_end(d["stream"])
    first_error = s["errors"][0] if s["errors"] else None
    message = first_error.get("message") if isinstance(first_error, dict) else first_error
    r = d["request_after"] or {}
    rows = [*_health_after_kill(d["polls"]),
            ["a stream in flight", f"{s['chunks']} text chunks, then {len(s['errors'])} error event "
                                   f"({message}), [DONE] {'sent' if s['done'] else 'not sent'}"],
            [f"a completion at {r.get('t', 0):.2f} s", f"HTTP {r.get('status')}: {r.get('error')}"],
            ["the API server", f"exited at {d['exit_s']} s, code {d['server_exit_code']}"]]
    return html.table(["after SIGKILL of the engine core", "what came back"], rows)


def health_probes_startup_chart(record) -> charts.Timeline:
    """Per endpoint: from spawn to its first HTTP answer (refused), then until its first 200."""
    polls = record["data"]["startup"]["polls"]
    ready = record["data"]["startup"]["ready_s"]
    rows = []
    for key, label in (("health", "/health"), ("models", "/v1/models"), ("completion", "a completion")):
        answered = next((p["t"] for p in polls if isinstance(p.get(key), int)), None)
        ok = next((p["t"] for p in polls if p.get(key) == 200), None)
        if answered is None or ok is None:
            continue
        rows.append(charts.Span(f"{label}: no HTTP answer", 0.0, answered, tone=1,
                                text=f"refused until {answered:.1f} s"))
        failed = tuple(p["t"] for p in polls if p["t"] < ok and p.get(key) is not None and p.get(key) != 200)
        if ok > answered or failed:
            rows.append(charts.Span(f"{label}: open, not yet 200 (dots: polls that failed)", answered, ok - answered,
                                    tone=3, events=failed, text=f"200 from {ok:.1f} s"))
        else:
            rows.append(charts.Span(f"{label}: 200", ok, 0.0, tone=0, events=(ok,), text=f"200 from {ok:.1f} s"))
    return charts.Timeline(title="What each endpoint answered from the moment the server process was spawned",
                           x_label="seconds after spawn", rows=tuple(rows),
                           marks=(charts.Mark(ready, "all three 200"),) if ready is not None else ())


VIEWS = {
    "drain-abort": View(fragments={"timeline": drain_abort_timeline}, charts={"streams": drain_abort_streams_chart}),
    "drain-grace": View(fragments={"timeline": drain_grace_timeline}, charts={"streams": drain_grace_streams_chart}),
    "health-probes": View(fragments={"startup": health_probes_startup, "stall": health_probes_stall,
                                     "death": health_probes_death},
                          charts={"startup": health_probes_startup_chart}),
}
