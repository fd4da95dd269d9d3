"""How the evidence of the KV cache article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_preemption, kv_reservation, kv_sizing, kv_timeline, prefix_hits
from verify.site import charts, html
from verify.site.views import View


# cache-isolation: cache_salt and prompt logprobs against the prefix cache, hits per request.
def cache_isolation_table(record):
    rows = [[case, x["prompt_tokens"], f"{x['queries']:.0f}", f"{x['hits']:.0f}"]
            for case, x in record["data"]["cases"].items()]
    return html.table(["request (same prompt each time)", "prompt tokens", "tokens queried", "tokens hit"], rows)


# kv-preemption: a KV cache too small for the load, preemptions per run.
def kv_preemption_table(record):
    d = record["data"]
    rows = []
    for label, key, at_once in (("all at once", "loaded", kv_preemption.REQUESTS),
                                ("reference", "reference", kv_preemption.REFERENCE_AT_ONCE)):
        b = d[key]
        rows.append([label, at_once, f"{b['preemptions']:.0f}",
                     sum(1 for r in b["results"] if r["finish_reason"] == "length"), f"{b['prompt_tokens']:.0f}"])
    return html.table([f"run ({kv_preemption.REQUESTS} requests, {kv_preemption.MAX_TOKENS} tokens each; "
                       f"cache {d['num_blocks']} blocks of {d['block_size']})", "at once", "preemptions",
                       "finished (length)", "prompt tokens the engine counted"], rows)


# kv-reservation: KV cache blocks held as tokens arrive, for both max_tokens.
def kv_reservation_blocks_chart(record) -> charts.XY:
    """KV cache blocks held against tokens generated, for both max_tokens, with the reservation line."""
    d = record["data"]
    small, large = d["small"], d["large"]
    reserved = kv_reservation.blocks_needed(d, large["prompt_tokens"], large["max_tokens"])

    def held(readings):
        return tuple((n, kv_reservation.blocks_at(d, u)) for n, u, *_ in readings)

    return charts.XY(
        title="KV cache blocks a request holds as its tokens arrive, for a small and a large max_tokens",
        x_label="tokens generated", y_label="KV cache blocks held",
        lines=(charts.Line(f"max_tokens {small['max_tokens']}", held(small["readings"][:-1]), tone=0, step=True),
               # the last reading of the small request is taken after it finished
               charts.Line(f"max_tokens {large['max_tokens']} (dashed: the same steps)", held(large["readings"]),
                           tone=4, dashed=True, step=True)),
        rules=(charts.Rule(reserved, f"a reservation up front for max_tokens {large['max_tokens']} would hold "
                                     f"{reserved} blocks", tone=1),),
        x_ticks=tuple(range(0, kv_reservation.TOKENS + 1, 50)))


def kv_reservation_table(record):
    d = record["data"]
    rows = []
    for key in ("small", "large"):
        r = d[key]
        levels = sorted({kv_reservation.blocks_at(d, u) for _, u, *_ in r["readings"]})
        rows.append([r["max_tokens"], r["prompt_tokens"], len(r["readings"]),
                     " → ".join(map(str, levels)), kv_reservation.blocks_needed(d, r["prompt_tokens"], r["max_tokens"])])
    return html.table([f"max_tokens (block size {d['block_size']}, {d['num_blocks']} blocks)", "prompt tokens",
                       "tokens generated", "blocks held as tokens arrived", "blocks a reservation would hold"], rows)


# kv-sizing: how big the KV cache is, the arithmetic against the start-up report.
def kv_sizing_table(record):
    d = record["data"]
    cc, rep, calc, c = d["cache_config"], kv_sizing.reported_sizes(d), kv_sizing.worked_out(d), d["model_config"]
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return html.table(["", "value"], [
        ["layers x key-value heads x head size (config.json)", f"{c['num_hidden_layers']} x {c['num_key_value_heads']} x {head}"],
        ["bytes per value (--dtype " + str(d["dtype"]) + ")", kv_sizing.DTYPE_BYTES[d["dtype"]]],
        ["bytes per token (keys and values)", f"{calc['bytes_per_token']:,}"],
        ["memory given to the cache (kv_cache_memory_bytes)", f"{int(cc['kv_cache_memory_bytes']):,}"],
        ["block size (tokens)", cc["block_size"]],
        ["blocks: worked out / reported", f"{calc['blocks']} / {cc['num_gpu_blocks']}"],
        ["tokens: worked out / reported at start-up", f"{calc['tokens']:,} / {rep['tokens']:,}"],
        [f"maximum concurrency at {rep['per_request']:,} tokens per request", f"{rep['concurrency']}x"],
        ["prefix caching", cc["enable_prefix_caching"]],
    ]) + html.pre(d["report"]["lines"], "the server's start-up report")


# kv-timeline: KV cache usage over time.
def kv_timeline_usage_chart(record) -> charts.XY:
    """KV cache blocks in use as the staggered requests start, grow and end; each request's lifetime above."""
    d = record["data"]
    usage = tuple((s["t"], kv_timeline.blocks_at(d, s["kv_cache_usage_perc"])) for s in d["samples"])
    n = len(d["requests"])
    return charts.XY(
        title=f"KV cache blocks in use while {n} staggered requests run",
        x_label="seconds", y_label="KV cache blocks in use",
        lines=(charts.Line("blocks in use (/metrics, read at intervals)", usage, tone=0, step=True),),
        bands=tuple(charts.Band(r["started_s"], r["ended_s"], str(i + 1)) for i, r in enumerate(d["requests"])),
        bands_label=f"requests 1 to {n} (the table's rows), start to end")


def kv_timeline_table(record):
    d = record["data"]
    rows = [[i + 1, kv_timeline.MAX_TOKENS[i], f"{r['started_s']:.1f} s", f"{r['ended_s']:.1f} s",
             (r["usage"] or {}).get("prompt_tokens")] for i, r in enumerate(d["requests"])]
    return html.table(["request", "tokens generated", "started", "ended", "prompt tokens"], rows)


# prefix-hits: prefix-cache hits for a repeated prompt, per length, and the timed rounds.
def prefix_hits_table(record):
    d = record["data"]
    rows = []
    for n, x in d["lengths"].items():
        p = x["warm"]["prompt_tokens"]
        rows.append([p, f"{x['cold']['queries']:.0f} / {x['cold']['hits']:.0f}",
                     f"{x['warm']['queries']:.0f} / {x['warm']['hits']:.0f}", prefix_hits.expected_hits(p, d["block_size"]),
                     "same" if x["cold"]["text"] == x["warm"]["text"] else "different"])
    return html.table([f"prompt tokens (block size {d['block_size']})", "first request: queried / hit tokens",
                       "second request: queried / hit tokens", "(tokens - 1) rounded down to whole blocks",
                       "greedy output, second against first"], rows)


def prefix_hits_timed(record):
    rows = [[i + 1, html.ms(t["cold"]["ttft_s"]), html.ms(t["warm"]["ttft_s"]), f"{t['warm']['hits']:.0f}"]
            for i, t in enumerate(record["data"]["timed"])]
    return html.table([f"round ({prefix_hits.TIMED_LENGTH}-token prompt)", "TTFT, cold", "TTFT, same prompt again",
                       "tokens hit"], rows)


VIEWS = {
    "cache-isolation": View(fragments={"table": cache_isolation_table}),
    "kv-preemption": View(fragments={"table": kv_preemption_table}),
    "kv-reservation": View(fragments={"table": kv_reservation_table}, charts={"blocks": kv_reservation_blocks_chart}),
    "kv-sizing": View(fragments={"table": kv_sizing_table}),
    "kv-timeline": View(fragments={"table": kv_timeline_table}, charts={"usage": kv_timeline_usage_chart}),
    "prefix-hits": View(fragments={"table": prefix_hits_table, "timed": prefix_hits_timed}),
}
