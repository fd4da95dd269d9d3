"""The evidence of verify/jobs/health/health_probes.py on a page."""

from __future__ import annotations

from verify.jobs.health._watch import tokens_and_end
from verify.site import charts, html
from verify.site.views.health._timeline import runs

FIELDS = ("port", "health", "models", "completion")


def startup(record) -> str:
    polls = record["data"]["startup"]["polls"]
    return html.table(["from (s after spawn)", "to", "polls", "port", "/health", "/v1/models", "completion"],
                      runs(polls, FIELDS))


def stall(record) -> str:
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


def _runs(polls: list[dict]) -> list[list[str]]:
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


def death(record) -> str:
    d = record["data"]["death"]
    s = tokens_and_end(d["stream"])
    first_error = s["errors"][0] if s["errors"] else None
    message = first_error.get("message") if isinstance(first_error, dict) else first_error
    r = d["request_after"] or {}
    rows = [*_runs(d["polls"]),
            ["a stream in flight", f"{s['chunks']} text chunks, then {len(s['errors'])} error event "
                                   f"({message}), [DONE] {'sent' if s['done'] else 'not sent'}"],
            [f"a completion at {r.get('t', 0):.2f} s", f"HTTP {r.get('status')}: {r.get('error')}"],
            ["the API server", f"exited at {d['exit_s']} s, code {d['server_exit_code']}"]]
    return html.table(["after SIGKILL of the engine core", "what came back"], rows)


def startup_chart(record) -> charts.Timeline:
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


FRAGMENTS = {"startup": startup, "stall": stall, "death": death}
CHARTS = {"startup": startup_chart}
