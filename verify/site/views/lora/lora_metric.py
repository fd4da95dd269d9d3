"""The evidence of verify/jobs/lora/lora_metric.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_metric as job
from verify.site import html


def _series(sample: dict) -> str:
    labels = sample["labels"]
    return ", ".join(f'{k}="{labels.get(k, "")}"' for k in ("max_lora", "running_lora_adapters", "waiting_lora_adapters"))


def fragment_after(record):
    after = record["data"]["after"]
    rows = [[_series(s), f"{s['value']:.3f}", f"{after['unix_time'] - s['value']:.1f} s"]
            for s in sorted(after["samples"], key=lambda s: -s["value"])]
    return html.table([f"{job.METRIC} series after the requests, newest first", "value",
                       "scrape's Unix time minus value"], rows)


def fragment_during(record):
    rows = []
    for s in record["data"]["during"]:
        if s["samples"]:
            newest = max(s["samples"], key=lambda x: x["value"])
            waiting = "" if s.get("waiting") is None else f"{s['waiting']:.0f}"
            if not rows or rows[-1][1:] != [_series(newest), waiting]:
                rows.append([f"{s['unix_time'] - record['data']['during'][0]['unix_time']:.1f} s", _series(newest),
                             waiting])
    return html.table(["scrape (s after the first)", f"newest {job.METRIC} series, when it changed",
                       job.QUEUE], rows)


FRAGMENTS = {"after": fragment_after, "during": fragment_during}
