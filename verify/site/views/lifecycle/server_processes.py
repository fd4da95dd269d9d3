"""The processes of a running server, as a table."""

from __future__ import annotations

from verify.jobs.lifecycle import server_processes as job
from verify.site import html


def fragment(record):
    d = record["data"]
    cpu = {p["pid"]: p["cpu_s"] for p in d["before"]}
    role_of = {p["pid"]: role for role, p in job.process_roles(d["after"]).items()}
    rows = [[p["pid"], p["ppid"], p["name"], role_of.get(p["pid"], "helper"), f"{p['rss_mib']} MiB",
             f"{p['cpu_s'] - cpu.get(p['pid'], 0.0):.2f} s"] for p in d["after"]]
    return html.table(["pid", "parent", "name", "role", "resident memory",
                       f"CPU during one {d['generation']['max_tokens']}-token stream"], rows)


FRAGMENTS = {"table": fragment}
