"""The evidence of verify/jobs/offline/offline_defaults.py on a page."""

from __future__ import annotations

from verify.site import html


def fragment_outputs(record):
    rows = [[i, r["prompt"], r["tokens"], r["finish_reason"], r["text"]]
            for i, r in enumerate(record["data"]["generate"]["results"])]
    return html.table(["#", "prompt", "tokens", "finish_reason", "text"], rows)


FRAGMENTS = {"outputs": fragment_outputs}
