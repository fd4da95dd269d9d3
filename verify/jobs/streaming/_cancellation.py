"""The cancellation jobs: the same trial on each network path, with each client.

One job per path (direct, and each nginx set-up), so each path has its own
verdict, evidence file and CI job. Each job runs the trial with httpx and with
the openai client. A path that propagates the hang-up is expected to stop the
engine; the one that ignores client aborts is expected to keep it generating,
so the page shows the breakage next to the paths that work. Either verdict
needs a request that was running and producing tokens when the client left.
"""

from __future__ import annotations

import functools

from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

CLIENTS = ("httpx", "openai")
# The engine must let go of the request within this long after the client does.
STOP_TOLERANCE_S = 2.0
# Long enough (about 30 s here) that a request still generating at the end was not stopped.
MAX_TOKENS = 600
PAGES = ("streaming.md", "kv-cache.md", "lifecycle.md")


def _collect(proxy_setup, max_tokens):
    def collect(ctx) -> dict:
        from verify.measure.cancel import trial
        return {"trials": {c: trial(ctx, c, proxy_setup, max_tokens, live=was_generating) for c in CLIENTS}}
    return collect


def was_generating(t) -> str | None:
    """Why the trial cannot say anything about cancellation, or None when the request was live when the client left."""
    age = t.get("disconnect_reading_age_s")
    seen = f" (the last reading before then was {age:.2f} s old)" if age is not None else " (no reading before then)"
    if not t.get("running_at_disconnect"):
        return "no request was running when the client left" + seen
    if not t.get("generated_at_disconnect"):
        return "the request had generated no token when the client left" + seen
    return None


def _attempts(t) -> str:
    n = t.get("attempts", 1)
    return "" if n == 1 else f" (attempt {n}; the earlier ones did not catch the request generating)"


def _decide_client_trial(client, label, expect_stop, d):
    t = d["trials"][client]
    not_live = was_generating(t)
    if not_live:
        return Verdict(INCONCLUSIVE, f"{label}, {client}: {not_live}, so the trial shows nothing "
                                     f"({t.get('attempts', 1)} attempts)")
    after = t["stop_after_disconnect_s"]
    stopped_early = after is not None and after <= STOP_TOLERANCE_S and t["generated_tokens"] < t["max_tokens"]
    how = (f"engine stopped {after:.2f} s after the client left" if after is not None
           else "engine still running when watching ended")
    because = (f"{label}, {client}: {t['generated_at_disconnect']:.0f} tokens generated when the client left; "
               f"{how}; {t['generated_tokens']:.0f} of {t['max_tokens']} tokens generated in all "
               f"(tolerance {STOP_TOLERANCE_S:.0f} s){_attempts(t)}")
    if expect_stop:
        return verdict_if(stopped_early, because)
    return verdict_if(not stopped_early and t["generated_tokens"] >= t["max_tokens"], because)


def _decide_client(client, label, expect_stop):
    # A partial of a module-level rule, not a closure: see proxy_buffering._decide.
    return functools.partial(_decide_client_trial, client, label, expect_stop)


def _decide_kv_freed(d):
    found = []
    for c in CLIENTS:
        t = d["trials"][c]
        if was_generating(t) or not t["kv_cache_usage_at_disconnect"]:
            return Verdict(INCONCLUSIVE, f"{c}: the request held no KV cache when the client left")
        found.append((c, t["kv_cache_usage_before"], t["kv_cache_usage_at_disconnect"], t["kv_cache_usage_after"]))
    freed = all(after <= before for _, before, _, after in found)
    return verdict_if(freed, "; ".join(f"{c}: KV cache usage {before * 100:.3f} % before the request, "
                                       f"{at * 100:.3f} % when the client left, {after * 100:.3f} % after the engine stopped"
                                       for c, before, at, after in found))


def _decide_log_line(d):
    if not all(d["trials"][c].get("server_log_read") for c in CLIENTS):
        return Verdict(INCONCLUSIVE, "the server's log could not be read (a server this run did not start)")
    lines = [line for c in CLIENTS for line in d["trials"][c]["abort_log_lines"]]
    return verdict_if(bool(lines), (f"{len(lines)} log lines mention the abort, e.g. {lines[0][-120:]!r}" if lines
                                    else "no log line mentions an abort (server started with --enable-log-requests)"))


def cancellation_job(job_id: str, label: str, proxy_setup: str | None, expect_stop: bool = True,
                     max_tokens: int = MAX_TOKENS) -> Job:
    if expect_stop:
        claims = [Claim(f"{job_id}.{c}", f"{label}: when a {c} client abandons a stream, the engine stops "
                        f"generating within {STOP_TOLERANCE_S:.0f} s.", _decide_client(c, label, True),
                        timing=True) for c in CLIENTS]
        claims.append(Claim(f"{job_id}.kv-freed", f"{label}: once the engine lets go of an abandoned request, KV cache "
                            "usage is back to its level before the request.", _decide_kv_freed))
    else:
        claims = [Claim(f"{job_id}.{c}", f"{label}: when a {c} client abandons a stream, the engine keeps "
                        "generating to max_tokens for nobody.", _decide_client(c, label, False)) for c in CLIENTS]
    if proxy_setup is None:
        claims.append(Claim(f"{job_id}.log-line", "The server logs an identifiable line when it aborts a request "
                            "whose client disconnected (with --enable-log-requests).", _decide_log_line))
    return Job(
        id=job_id,
        title=f"Cancellation: {label}",
        question=f"{label}: when a client abandons a long generation after 2 s, how long until the engine stops?",
        pages=PAGES if proxy_setup is None else ("streaming.md",),
        collect=_collect(proxy_setup, max_tokens),
        claims=tuple(claims),
    )
