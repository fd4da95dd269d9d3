"""The endpoints beyond chat and completions, as a table."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    rows = [[name, e["status"], e["content_type"][:40], e["text"][:90]] for name, e in record["data"]["endpoints"].items()]
    return html.table(["endpoint", "HTTP status", "content type", "body (start)"], rows)


FRAGMENTS = {"table": fragment}
