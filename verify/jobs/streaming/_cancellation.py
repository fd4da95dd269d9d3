"""The cancellation jobs: the same trial on each network path, with each client.

One job per path (direct, and each nginx set-up), so each path has its own
verdict, evidence file and CI job. Each job runs the trial with httpx and with
the openai client.
"""

from __future__ import annotations

from verify.site import html as render
from verify.job import Claim, Job, verdict_if

CLIENTS = ("httpx", "openai")
# The engine must let go of the request within this long after the client does.
STOP_TOLERANCE_S = 2.0
PAGES = ("streaming.md", "kv-cache.md", "lifecycle.md")


def _collect(proxy_setup):
    def collect(ctx) -> dict:
        from verify.measure.cancel import trial
        return {"trials": {c: trial(ctx, c, proxy_setup) for c in CLIENTS}}
    return collect


def _decide_client(client, label):
    def decide(d):
        t = d["trials"][client]
        after = t["stop_after_disconnect_s"]
        stopped_early = after is not None and after <= STOP_TOLERANCE_S and t["generated_tokens"] < t["max_tokens"]
        how = (f"engine stopped {after:.2f} s after the client left" if after is not None
               else "engine still running when watching ended")
        return verdict_if(stopped_early, f"{label}, {client}: {how}; {t['generated_tokens']:.0f} of "
                                         f"{t['max_tokens']} tokens generated (tolerance {STOP_TOLERANCE_S:.0f} s)")
    return decide


def _decide_log_line(d):
    lines = [line for c in CLIENTS for line in d["trials"][c]["abort_log_lines"]]
    return verdict_if(bool(lines), (f"{len(lines)} log lines mention the abort, e.g. {lines[0][-120:]!r}" if lines
                                    else "no log line mentions an abort (server started with --enable-log-requests)"))


def _fragment(record):
    rows = []
    for c in CLIENTS:
        t = record["data"]["trials"][c]
        rows.append([t["path"], c, f"{t['client_gone_at_s']:.2f} s",
                     "still running" if t["stop_after_disconnect_s"] is None else f"{t['stop_after_disconnect_s']:.2f} s",
                     f"{t['generated_tokens']:.0f} / {t['max_tokens']}",
                     f"{(t['kv_cache_usage_at_disconnect'] or 0) * 100:.2f} % → {t['kv_cache_usage_after'] * 100:.2f} %",
                     "; ".join(t["proxy_access_log"]) or "-"])
    return render.table(["path", "client", "client left at", "engine stopped after", "tokens generated",
                         "KV cache usage", "nginx access log ($msec $status $request_time ...)"], rows)


def _fragment_log(record):
    lines = [line for c in CLIENTS for line in record["data"]["trials"][c]["request_log_lines"]]
    return render.pre(lines or ["(no request log lines)"], "server log lines for the abandoned requests")


def cancellation_job(job_id: str, label: str, proxy_setup: str | None) -> Job:
    claims = [Claim(f"{job_id}.{c}", f"{label}: when a {c} client abandons a stream, the engine stops "
                    f"generating within {STOP_TOLERANCE_S:.0f} s.", _decide_client(c, label)) for c in CLIENTS]
    if proxy_setup is None:
        claims.append(Claim(f"{job_id}.log-line", "The server logs an identifiable line when it aborts a request "
                            "whose client disconnected (with --enable-log-requests).", _decide_log_line))
    return Job(
        id=job_id,
        title=f"Cancellation: {label}",
        question=f"{label}: when a client abandons a long generation after 2 s, how long until the engine stops?",
        pages=PAGES if proxy_setup is None else ("streaming.md",),
        collect=_collect(proxy_setup),
        claims=tuple(claims),
        fragments={"table": _fragment, "log": _fragment_log},
    )
