"""What --api-key protects, as a table."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    rows = [[n, c["without key"], c["with key"]] for n, c in record["data"]["endpoints"].items()]
    return html.table(["endpoint", "HTTP status without the key", "HTTP status with it"], rows)


FRAGMENTS = {"table": fragment}
