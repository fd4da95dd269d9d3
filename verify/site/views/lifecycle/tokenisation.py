"""Tokenisation: the counts as a table, and the chat template's output."""

from __future__ import annotations

from verify.jobs.lifecycle import tokenisation as job
from verify.site import html


def fragment(record):
    rows = [[k, " / ".join(m["content"] for m in job.MESSAGES.get(k, [])) or k, r["counts"]["text_alone"],
             r["counts"]["with_chat_template"], r["usage"]["prompt_tokens"]]
            for k, r in record["data"]["requests"].items()]
    return html.table(["messages", "text", "/tokenize, text alone", "/tokenize, with chat template",
                       "usage.prompt_tokens"], rows)


def fragment_templated(record):
    return html.pre(record["data"]["templated_short_prompt"].splitlines(),
                    "what the model reads for the one message 'Say hi.' (the chat template's output)")


FRAGMENTS = {"table": fragment, "templated": fragment_templated}
