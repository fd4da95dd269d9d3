"""cache_salt and prompt logprobs against the prefix cache: hits per request."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    rows = [[case, x["prompt_tokens"], f"{x['queries']:.0f}", f"{x['hits']:.0f}"]
            for case, x in record["data"]["cases"].items()]
    return html.table(["request (same prompt each time)", "prompt tokens", "tokens queried", "tokens hit"], rows)


FRAGMENTS = {"table": fragment}
