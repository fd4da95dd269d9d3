"""How the evidence of the OpenAI-compatible server article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.openai_server import request_handling
from verify.site import html
from verify.site.views import View


# api-key-scope: what --api-key protects.
def api_key_scope_table(record):
    rows = [[n, c["without key"], c["with key"]] for n, c in record["data"]["endpoints"].items()]
    return html.table(["endpoint", "HTTP status without the key", "HTTP status with it"], rows)


# request-handling: what the server accepts, adjusts and refuses.
def request_handling_table(record):
    d = record["data"]
    rows = []
    for n in request_handling.CASES:
        c = request_handling.case_of(d, n)
        e = request_handling.error_of(d, n)
        rows.append([n, c["status"], e.get("type", ""), e.get("param") or "", (e.get("message") or "")[:110]])
    return html.table(["request", "HTTP status", "error.type", "error.param", "error.message"], rows)


# server-endpoints: the endpoints beyond chat and completions.
def server_endpoints_table(record):
    rows = [[name, e["status"], e["content_type"][:40], e["text"][:90]] for name, e in record["data"]["endpoints"].items()]
    return html.table(["endpoint", "HTTP status", "content type", "body (start)"], rows)


VIEWS = {
    "api-key-scope": View(fragments={"table": api_key_scope_table}),
    "request-handling": View(fragments={"table": request_handling_table}),
    "server-endpoints": View(fragments={"table": server_endpoints_table}),
}
