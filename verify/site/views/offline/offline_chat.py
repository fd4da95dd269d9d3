"""The evidence of verify/jobs/offline/offline_chat.py on a page."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    d = record["data"]
    return html.table(["call", "prompt tokens", "greedy answer"], [
        ["llm.chat()", len(d["chat"]["prompt_token_ids"]), d["chat"]["text"]],
        ["llm.generate()", len(d["generate"]["prompt_token_ids"]), d["generate"]["text"]],
    ]) + html.pre(d["chat"]["prompt"].splitlines(), "the prompt chat() sent, decoded")


FRAGMENTS = {"table": fragment}
