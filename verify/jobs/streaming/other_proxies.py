"""Caddy and HAProxy in front of the server: does the stream still flow?

The same stream and the same delivery rule as proxy-buffering (nginx), through
the two other proxies Debian packages, each at its defaults over plain HTTP and
with TLS termination, and with the setting its documentation gives for
streaming. The configs are the files under snippets/caddy/ and snippets/haproxy/; HAProxy's
streaming file changes two settings, so the first is also measured alone.
"""

from __future__ import annotations

from verify.jobs.streaming.proxy_buffering import _decide, capture_paths
from verify.job import Claim, Job

PROXIES = {"caddy": "Caddy", "haproxy": "HAProxy"}
# haproxy-no-delay: streaming.cfg changes two settings (option http-no-delay, timeout server); this
# path has only the first, so the record can tell which one makes the stream flow.
PATHS = ("direct", *(f"{p}-{how}" for p in PROXIES for how in ("default", "tls", "streaming")), "haproxy-no-delay")
HOW = {"default": "with its default settings", "tls": "with its default settings and TLS termination",
       "streaming": "with the streaming setting its documentation gives",
       "no-delay": "with only option http-no-delay added to its defaults"}
# HAProxy's streaming file changes two settings: its sentence names both.
# Half proxy-buffering's stream: which of them pass tokens one at a time shows within 40 (HAProxy's
# default held the recorded 80-token streams in blocks from the start).
MAX_TOKENS = 40
HOW_FOR = {"haproxy-streaming": "with its streaming file (option http-no-delay, and timeout server raised to 300 s)"}


def collect(ctx) -> dict:
    return capture_paths(ctx, PATHS, MAX_TOKENS)


JOB = Job(
    id="other-proxies",
    title="Streams through Caddy and HAProxy",
    question="Do Caddy and HAProxy, at their defaults (plain and with TLS termination) and with their documented "
             "streaming settings, pass a stream on one token at a time?",
    pages=("streaming.md",),
    collect=collect,
    claims=tuple(
        Claim(f"other-proxies.{path}", f"Through {PROXIES[path.split('-')[0]]} "
              f"{HOW_FOR.get(path, HOW[path.split('-', 1)[1]])}, tokens "
              "reach the client one at a time, as they do directly.", _decide(path, False),
              timing=path != "haproxy-no-delay")
        for path in PATHS[1:]),
)
