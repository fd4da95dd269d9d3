"""How the evidence of "Serving LoRA Adapters" looks on its page: its jobs' views, by job id."""

from __future__ import annotations

import statistics

from verify.jobs.lora import lora_cost, lora_max_loras, lora_metric, lora_runtime, lora_served, lora_target_modules
from verify.jobs.lora._answers import same
from verify.jobs.lora._together import span, text
from verify.site import charts, html
from verify.site.views import View


# lora-batching
def _answer_rows(record, groups: tuple[str, ...]):
    """Each trial's answers in the named groups beside the same request's answer alone (lora-batching and
    lora-max-loras record both alike)."""
    d = record["data"]
    rows = []
    for i, t in enumerate(d["trials"], 1):
        for g in groups:
            for s in t[g]:
                alone = text(d["alone"][s["case"]])
                got = text(s)
                rows.append([i, s["model"], got, "yes" if got == alone else f"no; alone: {alone}"])
    return rows


def lora_batching_mixed(record):
    return html.table(["trial", "model", "answer in the batch", "same as alone"],
                      _answer_rows(record, ("mixed",)) + _answer_rows(record, ("control",)))


def lora_batching_adapters(record):
    return html.table(["trial", "model", "answer, three adapters at once", "same as alone"],
                      _answer_rows(record, ("three_adapters",)))


def lora_batching_timeline_chart(record) -> charts.Timeline:
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


# lora-cost
def lora_cost_table(record):
    medians = lora_cost.itl(record["data"])
    base = statistics.median(medians[lora_cost.BASE]) if medians[lora_cost.BASE] else None
    rows = []
    for model, values in medians.items():
        m = statistics.median(values) if values else None
        rows.append([model, ", ".join(html.ms(v) for v in values), html.ms(m) if m else "",
                     f"{m / base:.2f}x" if m and base else ""])
    return html.table(["model", "inter-token latency, each round", "median of rounds", "against the base model"],
                      rows)


def lora_cost_bars_chart(record) -> charts.Bars:
    medians = {m: statistics.median(v) for m, v in lora_cost.itl(record["data"]).items() if v}
    return charts.Bars(title="Inter-token latency through each model on one server (median of rounds)",
                       x_label="model the request named", y_label="milliseconds per token",
                       bars=tuple(charts.Bar(m, v * 1000, f"{v * 1000:.0f}") for m, v in medians.items()), tone=0,
                       note=f"{lora_cost.TOKENS} tokens per request, {lora_cost.REPS} rounds; chat is the base model.")


# lora-max-loras
def lora_max_loras_adapters(record):
    return html.table(["trial", "model", "answer, adapters at once", "same as alone"],
                      _answer_rows(record, ("three_adapters", "two_adapters")))


def lora_max_loras_mixed(record):
    d = record["data"]
    rows = _answer_rows(record, ("mixed",))
    like = {r["trial"]: r["like"] for r in lora_max_loras.base_answers(d)}

    def equals(row) -> str:
        if row[1] != lora_max_loras.BASE:
            return ""
        if row[0] not in like:
            return "not decoded beside the adapter request"
        return ", ".join(like[row[0]]) or "none"

    return html.table(["trial", "model", "answer in the batch", "same as alone", "equals the answer alone of"],
                      [row + [equals(row)] for row in rows])


def lora_max_loras_timeline_chart(record) -> charts.Timeline:
    """The first trial's three different adapters sent at once."""
    t = record["data"]["trials"][0]
    rows = []
    for i, s in enumerate(t["three_adapters"], 1):
        sp = span(s)
        if sp:
            rows.append(charts.Span(f"{s['model']} (request {i})", sp[0], sp[1] - sp[0], tone=0,
                                    text=f"{(sp[1] - sp[0]) * 1000:.0f} ms"))
    return charts.Timeline(
        title=f"First to last token of three adapters' requests, sent at once (--max-loras {lora_max_loras.SLOTS})",
        x_label="ms", scale=1000, rows=tuple(rows),
        note=f"Sent at once: the last of the three {_last_send_ms(t['three_adapters'])} ms after the first (0 ms).")


def _last_send_ms(group: list[dict]) -> int:
    return round(max(s["started_s"] for s in group) * 1000)


# lora-metric
def _lora_metric_series(sample: dict) -> str:
    labels = sample["labels"]
    return ", ".join(f'{k}="{labels.get(k, "")}"' for k in ("max_lora", "running_lora_adapters", "waiting_lora_adapters"))


def lora_metric_after(record):
    after = record["data"]["after"]
    rows = [[_lora_metric_series(s), f"{s['value']:.3f}", f"{after['unix_time'] - s['value']:.1f} s"]
            for s in sorted(after["samples"], key=lambda s: -s["value"])]
    return html.table([f"{lora_metric.METRIC} series after the requests, newest first", "value",
                       "scrape's Unix time minus value"], rows)


def lora_metric_during(record):
    rows = []
    for s in record["data"]["during"]:
        if s["samples"]:
            newest = max(s["samples"], key=lambda x: x["value"])
            waiting = "" if s.get("waiting") is None else f"{s['waiting']:.0f}"
            if not rows or rows[-1][1:] != [_lora_metric_series(newest), waiting]:
                rows.append([f"{s['unix_time'] - record['data']['during'][0]['unix_time']:.1f} s",
                             _lora_metric_series(newest), waiting])
    return html.table(["scrape (s after the first)", f"newest {lora_metric.METRIC} series, when it changed",
                       lora_metric.QUEUE], rows)


# lora-runtime
LORA_RUNTIME_STEPS = {
    "load": "load attn-a's folder as attn-a-again", "load_again": "load it again, same name",
    "copy_answer": "ask attn-a-again", "static_answer": "ask attn-a (from --lora-modules)",
    "unload": "unload attn-a-again", "unloaded_answer": "ask attn-a-again", "unload_again": "unload it again",
    "load_missing": "load a folder that does not exist", "load_rank_32": "load a rank-32 adapter (server: 16)",
}


def lora_runtime_steps(record):
    steps = record["data"]["steps"]
    rows = []
    for key, label in LORA_RUNTIME_STEPS.items():
        a = steps[key]
        said = lora_runtime.answer_text(a) if key.endswith("answer") and a.get("status") == 200 else \
            (a.get("body_text") if a.get("status") == 200 else lora_runtime.error_message(a))
        rows.append([label, a.get("status"), said])
    rows.append(["/v1/models at the end", "", ", ".join(steps["models_at_end"]["parents"])])
    return html.table(["step, in order", "HTTP status", "what came back"], rows)


# lora-runtime-off
def lora_runtime_off_table(record):
    d = record["data"]
    rows = [[f"POST {d[k]['url_path'] if 'url_path' in d[k] else '/v1/' + k + '_lora_adapter'}", d[k]["status"],
             d[k].get("body_text", "")] for k in ("load", "unload")]
    return html.table(["request", "HTTP status", "body"], rows)


# lora-served
def lora_served_answers(record):
    d = record["data"]
    parents = d["models"]["parents"]
    rows = []
    for model, by_prompt in lora_served.answers_by_model(d).items():
        for prompt, answers in by_prompt.items():
            rows.append([model, parents.get(model) or "(base model)", prompt, answers[0],
                         f"yes, {len(answers)} of {len(answers)}" if same(answers) else "no"])
    return html.table(["model", "parent in /v1/models", "prompt", "greedy answer (24 tokens at most)",
                       "same every time"], rows)


# lora-target-modules
def lora_target_modules_answers(record):
    d = record["data"]
    base_model = lora_target_modules.BASE
    base = lora_target_modules.first_answers(d, base_model)
    rows = [[model, prompt, answer,
             "(the base model)" if model == base_model else ("yes" if answer == base[prompt] else "no")]
            for model in (base_model, "attn-a", "mlp-c")
            for prompt, answer in lora_target_modules.first_answers(d, model).items()]
    return html.table(["model", "prompt", "greedy answer", "same as the base model"], rows)


def lora_target_modules_log(record):
    lines = record["data"]["log"]["lines"]
    return html.pre(lines or ["(no WARNING or ERROR line mentions LoRA, mlp-c or the MLP's modules)"],
                    "the server's log, from its start: WARNING and ERROR lines about LoRA")


VIEWS = {
    "lora-batching": View(fragments={"mixed": lora_batching_mixed, "adapters": lora_batching_adapters},
                          charts={"timeline": lora_batching_timeline_chart}),
    "lora-cost": View(fragments={"table": lora_cost_table}, charts={"bars": lora_cost_bars_chart}),
    "lora-max-loras": View(fragments={"adapters": lora_max_loras_adapters, "mixed": lora_max_loras_mixed},
                           charts={"timeline": lora_max_loras_timeline_chart}),
    "lora-metric": View(fragments={"after": lora_metric_after, "during": lora_metric_during}),
    "lora-runtime": View(fragments={"steps": lora_runtime_steps}),
    "lora-runtime-off": View(fragments={"table": lora_runtime_off_table}),
    "lora-served": View(fragments={"answers": lora_served_answers}),
    "lora-target-modules": View(fragments={"answers": lora_target_modules_answers,
                                           "log": lora_target_modules_log}),
}
