"""How big the KV cache is: the arithmetic against the start-up report."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_sizing as job
from verify.site import html


def fragment(record):
    d = record["data"]
    cc, rep, calc, c = d["cache_config"], job.reported_sizes(d), job.worked_out(d), d["model_config"]
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return html.table(["", "value"], [
        ["layers x key-value heads x head size (config.json)", f"{c['num_hidden_layers']} x {c['num_key_value_heads']} x {head}"],
        ["bytes per value (--dtype " + str(d["dtype"]) + ")", job.DTYPE_BYTES[d["dtype"]]],
        ["bytes per token (keys and values)", f"{calc['bytes_per_token']:,}"],
        ["memory given to the cache (kv_cache_memory_bytes)", f"{int(cc['kv_cache_memory_bytes']):,}"],
        ["block size (tokens)", cc["block_size"]],
        ["blocks: worked out / reported", f"{calc['blocks']} / {cc['num_gpu_blocks']}"],
        ["tokens: worked out / reported at start-up", f"{calc['tokens']:,} / {rep['tokens']:,}"],
        [f"maximum concurrency at {rep['per_request']:,} tokens per request", f"{rep['concurrency']}x"],
        ["prefix caching", cc["enable_prefix_caching"]],
    ]) + html.pre(d["report"]["lines"], "the server's start-up report")


FRAGMENTS = {"table": fragment}
