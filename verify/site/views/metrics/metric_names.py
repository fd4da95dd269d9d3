"""The recommended metrics as the server exports them: name, type and its own help text."""

from __future__ import annotations

from verify.jobs.metrics import metric_names as job
from verify.site import html


def recommended(record):
    fam = record["data"]["families"]
    rows = []
    for name, kind in job.RECOMMENDED.items():
        f = fam.get(name) or {}
        series = sorted(f.get("samples", {}))
        shown = series[0] if len(series) == 1 else ", ".join(s.removeprefix(name) or name for s in series)
        rows.append([name, f.get("type", "not exported"), shown, f.get("help", "")])
    return html.table(["metric", "type", "series", "help text (the server's own)"], rows)


def counts(record):
    d = record["data"]
    kinds: dict[str, int] = {}
    for f in d["families"].values():
        kinds[f["type"]] = kinds.get(f["type"], 0) + 1
    return html.table(["vllm: families", "series names", *sorted(kinds)],
                      [[len(d["families"]), len(d["series"]), *[kinds[k] for k in sorted(kinds)]]])


FRAGMENTS = {"recommended": recommended, "counts": counts}
