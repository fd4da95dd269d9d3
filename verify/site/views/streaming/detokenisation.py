"""Views of detokenisation."""

from __future__ import annotations

import json

from verify.site import html


def fragment_chunks(record):
    rows = [[i, json.dumps(c["token_ids"]), repr(c.get("tokens_decoded_alone")), repr(c["content"]),
             c.get("finish_reason") or ""] for i, c in enumerate(record["data"]["chunks"])]
    return html.table(["chunk", "token ids", "each token decoded alone", "text sent", "finish_reason"], rows)


def fragment_clients(record):
    return html.table(["how the client rebuilt the text", "result"],
                      [[k, v] for k, v in record["data"]["results"].items()])


FRAGMENTS = {"chunks": fragment_chunks, "clients": fragment_clients}
