"""The evidence of verify/jobs/lora/lora_batching.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_batching as job
from verify.jobs.lora._together import span, text
from verify.site import charts, html


def _rows(record, group: str):
    d = record["data"]
    rows = []
    for i, t in enumerate(d["trials"], 1):
        for s in t[group]:
            alone = text(d["alone"][s["case"]])
            got = text(s)
            rows.append([i, s["model"], got, "yes" if got == alone else f"no; alone: {alone}"])
    return rows


def fragment_mixed(record):
    return html.table(["trial", "model", "answer in the batch", "same as alone"],
                      _rows(record, "mixed") + _rows(record, "control"))


def fragment_adapters(record):
    return html.table(["trial", "model", "answer, three adapters at once", "same as alone"],
                      _rows(record, "three_adapters"))


def timeline(record) -> charts.Timeline:
    """The first trial's three different adapters, then its three requests for one adapter."""
    t = record["data"]["trials"][0]
    rows = []
    for group, tone, what in (("three_adapters", 0, "different adapters"), ("one_adapter", 1, "one adapter")):
        for i, s in enumerate(t[group], 1):
            sp = span(s)
            if sp:
                rows.append(charts.Span(f"{s['model']} ({what}, request {i})", sp[0], sp[1] - sp[0], tone=tone,
                                        text=f"{(sp[1] - sp[0]) * 1000:.0f} ms"))
    return charts.Timeline(
        title="First to last token of each request, sent at once (--max-loras 1)", x_label="ms", scale=1000,
        rows=tuple(rows),
        note="Each group was sent at once (its last request within "
             f"{round(max(s['started_s'] for g in ('three_adapters', 'one_adapter') for s in t[g]) * 1000)} ms of its "
             "first, drawn at 0 ms); the two groups were sent one after the other and are drawn on one axis.")


FRAGMENTS = {"mixed": fragment_mixed, "adapters": fragment_adapters}
CHARTS = {"timeline": timeline}
