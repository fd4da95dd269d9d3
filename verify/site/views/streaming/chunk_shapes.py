"""Views of chunk-shapes."""

from __future__ import annotations

from verify.jobs.streaming import chunk_shapes as job
from verify.site import html


def fragment_table(record):
    rows = []
    for name, stream in record["data"]["streams"].items():
        s = job.chunk_shape(stream)
        token = record["data"]["finish_tokens"][name]
        rows.append([name, s["n_chunks"], s["completion_tokens"], repr(s["first_content"]), s["finish_reason"],
                     f"{token['token_ids']} {token['decoded_alone']!r}", repr(s["finish_text"]),
                     ", ".join(map(str, s["empty_mid"])) or "none"])
    return html.table(["prompt", "chunks with a choice", "completion_tokens", "first chunk content", "finish_reason",
                       "token on the finish chunk (decoded alone)", "text on the finish chunk",
                       "empty chunks mid-stream (index)"], rows)


FRAGMENTS = {"table": fragment_table}
