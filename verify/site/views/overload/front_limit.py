"""The evidence of verify/jobs/overload/front_limit.py on a page."""

from __future__ import annotations

from verify.site import html
from verify.site.views.overload._burst import answers_table


def burst(record) -> str:
    d = record["data"]
    finished = sum(v for k, v in d["moved"].items() if k.startswith("vllm:request_success_total"))
    return answers_table(d["burst_answers"]["answers"]) + html.table(
        ["the engine's /metrics", "change"], [["vllm:request_success_total", f"{finished:+.0f}"]])


FRAGMENTS = {"burst": burst}
