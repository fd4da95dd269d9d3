"""How the evidence of the cost article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.cost import billing, throughput
from verify.site import charts, html
from verify.site.views import View


# billing
def billing_table(record):
    d = record["data"]
    rows = []
    labels = {"n1": "chat, n=1", "n3": f"chat, n={billing.N}", "completions_default": "completions, no max_tokens",
              "chat_default": "chat, no max_tokens, prompt near the context's end", "repeat_first": "long prompt, first",
              "repeat_second": "same long prompt again"}
    for key, label in labels.items():
        x = d[key]
        rows.append([label, x["prompt_tokens"], x["completion_tokens"],
                     "n/a" if x.get("cached_tokens", None) is None else x["cached_tokens"],
                     f"{x['engine']['prompt_tokens_total']:.0f}", f"{x['engine']['generation_tokens_total']:.0f}",
                     f"{x['engine']['prefix_cache_hits_total']:.0f}"])
    return html.table(["request", "usage: prompt_tokens", "usage: completion_tokens", "usage: cached_tokens",
                       "engine: prompt tokens counted", "engine: tokens generated", "engine: prefix-cache hits"],
                      rows)


# cached-tokens
def cached_tokens_table(record):
    rows = [[name, x["prompt_tokens"], x["cached_tokens"], f"{x['engine_hits']:.0f}"]
            for name, x in record["data"].items()]
    return html.table(["request (same prompt, --enable-prompt-tokens-details)", "usage: prompt_tokens",
                       "usage: prompt_tokens_details.cached_tokens", "engine: prefix-cache hits"], rows)


# throughput
def throughput_chart(record) -> charts.XY:
    """Generated tokens per second at each concurrency, with its range and its cost per million tokens."""
    d = record["data"]
    t = throughput.throughput(d)
    return charts.XY(
        title="Generated tokens per second by requests at once, with the cost per million tokens at each",
        x_label="requests at once", y_label="generated tokens per second",
        lines=(charts.Line(f"tokens per second, median of {throughput.rounds(d)} rounds (whiskers: lowest to highest)",
                           tuple((i, t[c]["median"]) for i, c in enumerate(throughput.LEVELS)), tone=0, markers=True,
                           spread=tuple((t[c]["min"], t[c]["max"]) for c in throughput.LEVELS),
                           labels=tuple(f"${d['cost_per_million'][str(c)]:.2f}/M" for c in throughput.LEVELS)),),
        x_categories=tuple(str(c) for c in throughput.LEVELS),
        note=f"Next to each point: the cost per million generated tokens at ${d['price_per_hour']:.2f} an hour "
             "(an assumed price).")


def throughput_table(record):
    d = record["data"]
    t = throughput.throughput(d)
    rows = [[c, f"{t[c]['median']:.1f}", f"{t[c]['min']:.1f} to {t[c]['max']:.1f}",
             f"${d['cost_per_million'][str(c)]:.2f}"] for c in throughput.LEVELS]
    return html.table(["requests at once", f"tokens per second (median of {throughput.rounds(d)})", "range",
                       f"cost per million tokens at ${d['price_per_hour']:.2f}/hour (assumed price)"], rows)


VIEWS = {
    "billing": View(fragments={"table": billing_table}),
    "cached-tokens": View(fragments={"table": cached_tokens_table}),
    "throughput": View(fragments={"table": throughput_table}, charts={"throughput": throughput_chart}),
}
