"""The drain jobs' evidence, shown the same way for both: the polls, what each stream and request got,
and a timeline of every stream's text against SIGTERM and the process's exit."""

from __future__ import annotations

from verify.jobs.health._drain import after_signal, streams
from verify.site import charts, html
from verify.site.views.health._timeline import runs


def _stream(d, s) -> str:
    return (f"{s['chunks']} text chunks, the last {after_signal(s, s['last_text_s'])} s after SIGTERM; usage "
            f"{s['tokens']} of {d['stream_tokens']} tokens, finish reason {s['finish_reason']}, "
            f"{len(s['errors'])} error event(s), [DONE] {'sent' if s['done'] else 'not sent'}, ended "
            f"{after_signal(s, s['ended_s'])} s after SIGTERM"
            + (f" (client: {s['client_error']})" if s["client_error"] else ""))


def _request(r) -> str:
    if r is None:
        return "not sent: the server had exited"
    return (f"at {r['t']:.2f} s: {r['status']}" + (f", finish reason {r['finish_reason']}" if r.get("finish_reason") else "")
            + (f": {r['error']}" if r.get("error") else ""))


def timeline(record) -> str:
    return trial(record["data"])


def trials(record) -> str:
    return "".join(f'<p class="evidence-caption">Trial {i + 1}</p>' + trial(t)
                   for i, t in enumerate(record["data"]["trials"]))


def trial(d) -> str:
    drain = d["drain"]
    polls = html.table(["from (s after SIGTERM)", "to", "polls", "/health", "/v1/models", "/health through nginx"],
                       runs(drain["polls"], ("health", "models", "health_nginx")))
    rows = [*([f"stream {s['path']}", _stream(d, s)] for s in streams(d)),
            *([f"a new completion {path}", _request(r)] for path, r in (drain["new_requests"] or {}).items()),
            ["the process", f"exited {drain['exit_s']} s after SIGTERM, code {drain['server_exit_code']}"
             if drain["exit_s"] is not None else "still running when the job stopped waiting"]]
    return polls + html.table(["", "what came back"], rows)


def _arrivals(raw: dict, start: float) -> tuple[float, ...]:
    return tuple(round(x["t"] + start, 3) for x in raw.get("lines", []) if str(x.get("line", "")).startswith("data: "))


def _rows(d, label: str) -> tuple[list[charts.Span], float]:
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


def chart(record) -> charts.Timeline:
    d = record["data"]
    rows, sigterm = _rows(d, "")
    return charts.Timeline(title="The streams in flight against SIGTERM and the process's exit",
                           x_label="seconds after the streams were sent", rows=tuple(rows),
                           marks=(charts.Mark(sigterm, "SIGTERM"),))


def trials_chart(record) -> charts.Timeline:
    rows, signals = [], []
    for i, t in enumerate(record["data"]["trials"]):
        trial_rows, sigterm = _rows(t, f"trial {i + 1}, ")
        rows += trial_rows
        signals.append(sigterm)
    # Each trial's SIGTERM came the same time after its streams were sent, to a few ms: one mark.
    return charts.Timeline(title="The streams in flight against SIGTERM and each trial's exit",
                           x_label="seconds after the streams were sent", rows=tuple(rows),
                           marks=(charts.Mark(min(signals), "SIGTERM"),))
