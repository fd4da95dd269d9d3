"""The evidence of verify/jobs/lora/lora_max_loras.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_max_loras as job
from verify.jobs.lora._together import span, text
from verify.site import charts, html


def _rows(record, groups: tuple[str, ...]):
    d = record["data"]
    rows = []
    for i, t in enumerate(d["trials"], 1):
        for g in groups:
            for s in t[g]:
                alone = text(d["alone"][s["case"]])
                got = text(s)
                rows.append([i, s["model"], got, "yes" if got == alone else f"no; alone: {alone}"])
    return rows


def fragment_adapters(record):
    return html.table(["trial", "model", "answer, adapters at once", "same as alone"],
                      _rows(record, ("three_adapters", "two_adapters")))


def fragment_mixed(record):
    d = record["data"]
    rows = _rows(record, ("mixed",))
    like = {r["trial"]: r["like"] for r in job.base_answers(d)}

    def equals(row) -> str:
        if row[1] != job.BASE:
            return ""
        if row[0] not in like:
            return "not decoded beside the adapter request"
        return ", ".join(like[row[0]]) or "none"

    return html.table(["trial", "model", "answer in the batch", "same as alone", "equals the answer alone of"],
                      [row + [equals(row)] for row in rows])


def timeline(record) -> charts.Timeline:
    """The first trial's three different adapters sent at once."""
    t = record["data"]["trials"][0]
    rows = []
    for i, s in enumerate(t["three_adapters"], 1):
        sp = span(s)
        if sp:
            rows.append(charts.Span(f"{s['model']} (request {i})", sp[0], sp[1] - sp[0], tone=0,
                                    text=f"{(sp[1] - sp[0]) * 1000:.0f} ms"))
    return charts.Timeline(
        title=f"First to last token of three adapters' requests, sent at once (--max-loras {job.SLOTS})",
        x_label="ms", scale=1000, rows=tuple(rows),
        note=f"Sent at once: the last of the three {_last_send_ms(t['three_adapters'])} ms after the first (0 ms).")


def _last_send_ms(group: list[dict]) -> int:
    return round(max(s["started_s"] for s in group) * 1000)


FRAGMENTS = {"adapters": fragment_adapters, "mixed": fragment_mixed}
CHARTS = {"timeline": timeline}
