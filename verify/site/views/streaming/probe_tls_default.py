"""Views of probe-tls-default."""

from __future__ import annotations

from verify.site import html


def fragment_output(record):
    d = record["data"]
    return html.pre(d["run"]["lines"] + [f"(exit status {d['run']['exit_code']})"],
                    "the probe's table, through nginx with default settings and TLS termination (captured)")


FRAGMENTS = {"output": fragment_output}
