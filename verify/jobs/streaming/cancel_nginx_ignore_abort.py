"""Cancellation through nginx set to ignore client aborts: where it breaks, and where it does not.

nginx closes its upstream connection when writing to a client that has gone
fails, whatever proxy_ignore_client_abort says; the setting only decides what
happens when a client leaves while nginx has nothing to write. So the same
abandonment is tried on a flowing stream and on a non-streaming request (whose
client times out while the server is still generating), and the non-streaming
one also through the streaming configuration, which has the setting at its
default (off).
"""

from __future__ import annotations

import functools

from verify.jobs.streaming._cancellation import STOP_TOLERANCE_S, was_generating
from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

SETUP = "nginx-ignore-client-abort"
# About 8 s here: the broken path runs every one of them for nobody, some 6 s (three times
# STOP_TOLERANCE_S) after its client left at 2 s, so a late stop could not pass for running on.
MAX_TOKENS = 120
TRIALS = {  # name: (client, proxy set-up)
    "stream": ("openai", SETUP),
    "non-streaming": ("openai-non-streaming", SETUP),
    "non-streaming, abort not ignored": ("openai-non-streaming", "nginx-streaming"),
}


def collect(ctx) -> dict:
    from verify.measure.cancel import trial
    return {"trials": {name: trial(ctx, client, setup, MAX_TOKENS, live=was_generating) for name, (client, setup) in TRIALS.items()}}


def _stopped(t) -> bool:
    after = t["stop_after_disconnect_s"]
    return after is not None and after <= STOP_TOLERANCE_S and t["generated_tokens"] < t["max_tokens"]


def _describe(name, t) -> str:
    after = t["stop_after_disconnect_s"]
    return (f"{name}: client left at {t['client_gone_at_s']:.2f} s with {t['generated_at_disconnect']:.0f} tokens "
            f"generated; " + (f"engine stopped {after:.2f} s later" if after is not None else "engine still running")
            + f"; {t['generated_tokens']:.0f} of {t['max_tokens']} tokens generated")


def _decide_trial(name, expect_stop, d):
    t = d["trials"][name]
    not_live = was_generating(t)
    if not_live:
        return Verdict(INCONCLUSIVE, f"{name}: {not_live}")
    ok = _stopped(t) if expect_stop else (not _stopped(t) and t["generated_tokens"] >= t["max_tokens"])
    return verdict_if(ok, _describe(name, t) + f" (tolerance {STOP_TOLERANCE_S:.0f} s)")


def _decide(name, expect_stop):
    # A partial of a module-level rule, not a closure: see proxy_buffering._decide.
    return functools.partial(_decide_trial, name, expect_stop)


JOB = Job(
    id="cancel-nginx-ignore-abort",
    title="Cancellation: through nginx with proxy_ignore_client_abort on",
    question="With proxy_ignore_client_abort on, does an abandoned request keep the engine generating, for a "
             "flowing stream and for a non-streaming request?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("cancel-nginx-ignore-abort.stream-still-stops", "Through nginx with proxy_ignore_client_abort on, "
              f"an abandoned stream still stops the engine within {STOP_TOLERANCE_S:.0f} s: nginx fails to write "
              "the next token to the gone client and closes the upstream connection.",
              _decide("stream", True), timing=True),
        Claim("cancel-nginx-ignore-abort.non-streaming-keeps-running", "Through nginx with proxy_ignore_client_abort "
              "on, a non-streaming request whose client timed out keeps the engine generating to max_tokens for "
              "nobody.", _decide("non-streaming", False), timing=True),
        Claim("cancel-nginx-ignore-abort.non-streaming-default-stops", "Through nginx with the setting at its "
              f"default (off), the same abandoned non-streaming request stops the engine within "
              f"{STOP_TOLERANCE_S:.0f} s.", _decide("non-streaming, abort not ignored", True), timing=True),
    ),
)
