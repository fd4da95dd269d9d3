"""SIGTERM with vLLM's default --shutdown-timeout (0): what streams in flight and a new request get.

Each trial is verify/jobs/health/_drain.py's sequence on a server of its own, started with the
profile's flags only. What a stream in flight receives races with the shutdown (an error event
on one run, nothing at all on another), so the job runs TRIALS trials, each with its own client read
timeout, and every claim must hold in each.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

TRIALS = 2
# Each trial's streams give up after a different read timeout: an exit that follows the clients moves
# with it, an exit that merely takes a while does not. The process exited 0.3-0.4 s after the streams
# ended in the records, so windows 7 s apart tell the two apart.
READ_TIMEOUTS_S = (3.0, 10.0)
REFUSED_WITHIN_S = 0.5  # the claim: new connections are refused this soon after SIGTERM
EXIT_AFTER_STREAMS_S = 5.0  # the claim: the process exits this soon after its last stream ended


def collect(ctx) -> dict:
    from verify.jobs.health import _drain
    return {"trials": [_drain.drain(ctx, shutdown_timeout_s=None, read_timeout_s=t) for t in READ_TIMEOUTS_S]}


def _each(d, rule) -> tuple[bool | None, str]:
    """rule(trial) -> (verdict, reason) over every trial: refuted if one refutes, inconclusive if one is."""
    results = [rule(t) for t in d["trials"]]
    if len(results) != TRIALS:
        return None, f"{len(results)} trials recorded, {TRIALS} needed"
    verdicts = [v for v, _ in results]
    verdict = False if False in verdicts else None if None in verdicts else True
    return verdict, "; ".join(f"trial {i + 1}: {why}" for i, (_, why) in enumerate(results))


def _streams_cut(t) -> tuple[bool | None, str]:
    from verify.jobs.health._drain import after_signal, streams, streams_line, streams_missing
    if streams_missing(t):
        return None, streams_missing(t)
    delivered = streams(t)
    if any(s["chunks"] == 0 or after_signal(s, s["last_text_s"]) < -0.5 for s in delivered):
        return None, "a stream had no text shortly before SIGTERM, so it was not in flight: " + streams_line(t)
    # Short of its tokens, and not ended as a finished answer: told nothing, or told "abort".
    return all(s["chunks"] < t["stream_tokens"] and s["finish_reason"] in (None, "abort")
               and (s["tokens"] is None or s["tokens"] < t["stream_tokens"]) for s in delivered), streams_line(t)


def decide_streams_cut(d):
    return verdict_if(*_each(d, _streams_cut))


def _no_answer(status) -> bool:
    return not isinstance(status, int)  # the name of a connection error: refused, or cut mid-request


REFUSED = "ConnectError"  # httpx's name for a connection the port refused; a reset or a timeout is not one


def _refused(t) -> tuple[bool | None, str]:
    from verify.jobs.health._drain import new_request, request_line
    polls = t["drain"]["polls"]
    start = next((i for i, p in enumerate(polls) if _no_answer(p["health"]) and _no_answer(p["models"])), None)
    r = new_request(t, "direct")
    if start is None:
        return None, f"no poll after SIGTERM found the server gone: it answered until it exited ({len(polls)} polls)"
    if r is None:
        return None, "no completion was sent directly after SIGTERM, so what a new request gets is not recorded"
    after = polls[start:]
    refused = after[0]["t"] <= REFUSED_WITHIN_S and all(p["health"] == REFUSED and p["models"] == REFUSED
                                                        for p in after) and r["status"] == REFUSED
    return refused, (f"the first poll with no answer {after[0]['t']:.2f} s after SIGTERM; polls from then on: "
                     f"{sorted({str(p['health']) for p in after} | {str(p['models']) for p in after})}; "
                     + request_line(r, "directly"))


def decide_refused(d):
    return verdict_if(*_each(d, _refused))


def _nginx_502(t) -> tuple[bool | None, str]:
    from verify.jobs.health._drain import new_request, request_line
    r = new_request(t, "nginx")
    gone = [p["health_nginx"] for p in t["drain"]["polls"] if _no_answer(p["health"]) and _no_answer(p["models"])]
    if not gone:
        return None, "no poll went through nginx while the server refused connections"
    return set(gone) == {502} and (r is None or r["status"] == 502), (
        f"/health through nginx while the server refused connections: {sorted(set(map(str, gone)))}; "
        + request_line(r, "through nginx"))


def decide_nginx_502(d):
    return verdict_if(*_each(d, _nginx_502))


def _exits_after_streams(t) -> tuple[bool | None, str]:
    from verify.jobs.health._drain import after_signal, streams
    exit_s = t["drain"]["exit_s"]
    ends = [after_signal(s, s["ended_s"]) for s in streams(t)]
    how = ", ".join(f"{s['path']} {after_signal(s, s['ended_s']):.2f} s ("
                    + ("the client gave up" if s["client_error"] else
                       "an error event" if s["errors"] else "the server ended it") + ")"
                    for s in streams(t))
    if exit_s is None:
        return False, f"streams ended: {how}; the process had not exited when the job stopped waiting"
    return max(ends) - 0.5 <= exit_s <= max(ends) + EXIT_AFTER_STREAMS_S, (
        f"streams ended after SIGTERM: {how}; the process exited at {exit_s:.2f} s (code {t['drain']['server_exit_code']})")


def decide_exits_after_streams(d):
    return verdict_if(*_each(d, _exits_after_streams))


JOB = Job(
    id="drain-abort",
    title="SIGTERM with the default shutdown timeout",
    question="With vLLM's default --shutdown-timeout, what do streams in flight and a new request get on "
             "SIGTERM, and how soon does the process exit?",
    pages=("health.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # the job launches and signals servers of its own
    collect=collect,
    claims=(
        Claim("drain-abort.streams-cut", "With the default shutdown timeout, no stream in flight on SIGTERM "
              "finishes, direct or through nginx: each ends short of its tokens, with no finish reason or with "
              "finish_reason abort.", decide_streams_cut),
        Claim("drain-abort.refused-at-once", "From SIGTERM on, the port refuses new connections: /health, "
              "/v1/models and a new request sent directly get no HTTP answer at all.", decide_refused, timing=True),
        Claim("drain-abort.nginx-502", "Through nginx, the same moment gets HTTP 502 from nginx, for /health "
              "and for a new request.", decide_nginx_502),
        Claim("drain-abort.exits-after-streams", "The process exits once its last stream has ended, and not "
              f"before: within {EXIT_AFTER_STREAMS_S:.0f} s of it.", decide_exits_after_streams, timing=True),
    ),
)
