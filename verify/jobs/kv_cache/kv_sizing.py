"""How big the KV cache is, and how the server decided: its start-up report against the model's arithmetic.

Read from the running server: the start-up log line (tokens, maximum
concurrency), vllm:cache_config_info (block size, blocks, bytes given to the
cache, prefix caching), and the model's config.json (layers, key-value heads,
head size) from the folder the server loaded. The cache size is then worked
out by hand and compared. On the CPU build the bytes come from
VLLM_CPU_KVCACHE_SPACE; on a GPU from --gpu-memory-utilization (T4 profile).
"""

from __future__ import annotations

import re

from verify.headline import EXACT, Headline
from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

SNIPPET = "kv-cache/cache_config.py"
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "half": 2}
# The start-up report: one line on recent releases ("KV cache size: N tokens, Maximum
# concurrency for ..."), two lines on older ones ("GPU KV cache size: N tokens", then
# "Maximum concurrency for ..."). Both parts are read wherever they are.
SIZE = re.compile(r"KV cache size: ([\d,]+) tokens")
CONCURRENCY = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")


def collect(ctx) -> dict:
    import json
    from pathlib import Path

    from verify.measure import capture
    server = ctx.server
    labels = ctx.snippet(SNIPPET).cache_config(server.url)  # the page's own snippet
    log = server.log_since(0) if server.managed else []
    report = [line for line in log if SIZE.search(line) or CONCURRENCY.search(line)]
    complete = any(SIZE.search(line) for line in report) and any(CONCURRENCY.search(line) for line in report)
    argv = list(server.argv) if server.managed else []
    model_dir = Path(argv[argv.index("--model") + 1]) if "--model" in argv else None
    config = json.loads((model_dir / "config.json").read_text()) if model_dir else None
    dtype = argv[argv.index("--dtype") + 1] if "--dtype" in argv else None
    # One event per report line found (kept as "lines", which capture.log cannot carry); a report that
    # lacks its size or its concurrency line is a failed capture.
    return {"report": capture.results("startup-log", report, lines=report,
                                      error=None if complete else "no KV cache report in the server log (an "
                                      "external server's log is not ours to read)"),
            "cache_config": labels, "command": [a for a in argv[1:] if a != str(model_dir)],
            "model_config": {k: config.get(k) for k in ("num_hidden_layers", "num_key_value_heads",
                                                       "num_attention_heads", "hidden_size", "head_dim")}
            if config else None,
            "dtype": dtype}


def reported_sizes(d) -> dict:
    text = "\n".join(d["report"]["lines"])
    size, concurrency = SIZE.search(text), CONCURRENCY.search(text)
    if not (size and concurrency):
        raise ValueError("the start-up report lacks its " + ("size" if not size else "concurrency") + " line")
    return {"tokens": int(size.group(1).replace(",", "")), "per_request": int(concurrency.group(1).replace(",", "")),
            "concurrency": float(concurrency.group(2))}


def bytes_per_token(d) -> int:
    """Keys and values, for every layer and key-value head: 2 x layers x kv heads x head size x bytes."""
    c = d["model_config"]
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * head * DTYPE_BYTES[d["dtype"]]


def worked_out(d) -> dict:
    cc = d["cache_config"]
    block = int(cc["block_size"])
    per_token = bytes_per_token(d)
    blocks = int(cc["kv_cache_memory_bytes"]) // (per_token * block)
    return {"bytes_per_token": per_token, "block_size": block, "blocks": blocks, "tokens": blocks * block}


def decide_size(d):
    rep, cc = reported_sizes(d), d["cache_config"]
    calc = worked_out(d)
    ok = calc["blocks"] == int(cc["num_gpu_blocks"]) and calc["tokens"] == rep["tokens"]
    return verdict_if(ok, f"{int(cc['kv_cache_memory_bytes']) / 2**30:.2f} GiB / ({calc['bytes_per_token']:,} bytes per "
                          f"token x {calc['block_size']} tokens per block) = {calc['blocks']} blocks = "
                          f"{calc['tokens']:,} tokens; the server reported {cc['num_gpu_blocks']} blocks and "
                          f"{rep['tokens']:,} tokens")


def decide_concurrency(d):
    rep = reported_sizes(d)
    expected = rep["tokens"] / rep["per_request"]
    return verdict_if(abs(expected - rep["concurrency"]) < 0.01,
                      f"{rep['tokens']:,} tokens / {rep['per_request']:,} tokens per request (the context length) = "
                      f"{expected:.2f}; reported {rep['concurrency']:.2f}x")


def decide_block_size(d):
    cc = d["cache_config"]
    chosen = "--block-size" not in d["command"]
    if not chosen:
        return Verdict(INCONCLUSIVE, "the command sets --block-size itself")
    return verdict_if(int(cc["block_size"]) == 128, f"block size {cc['block_size']} tokens, with no --block-size flag "
                                                    f"(user_specified_block_size={cc.get('user_specified_block_size')})")


def decide_prefix_caching(d):
    cc = d["cache_config"]
    flagged = any("prefix-caching" in a for a in d["command"])
    return verdict_if(cc["enable_prefix_caching"] == "True" and not flagged,
                      f"enable_prefix_caching={cc['enable_prefix_caching']} with no prefix-caching flag on the "
                      f"command line (hash {cc.get('prefix_caching_hash_algo')})")


# --- headline figures

HEADLINE = Headline({
    "KV cache size reported at start-up (tokens)": lambda d: reported_sizes(d)["tokens"],
    "KV cache blocks (num_gpu_blocks)": lambda d: d["cache_config"]["num_gpu_blocks"],
    "block size (tokens)": lambda d: d["cache_config"]["block_size"],
    "maximum concurrency at the full context length (requests)": lambda d: reported_sizes(d)["concurrency"],
    "memory given to the KV cache (MiB)": lambda d: int(d["cache_config"]["kv_cache_memory_bytes"]) / 2**20,
}, EXACT, "the sizes, counts and limits the server reports are exact")

JOB = Job(
    id="kv-sizing",
    title="How big the KV cache is",
    question="How many tokens does the KV cache hold, how does the server arrive at that number, and what are its "
             "block size and prefix-caching defaults?",
    pages=("kv-cache.md",),
    collect=collect,
    claims=(
        Claim("kv-sizing.size-from-memory", "The cache holds as many whole blocks as fit in the memory given to it, "
              "at 2 x layers x key-value heads x head size x bytes per value per token; the start-up report "
              "says the same.", decide_size),
        Claim("kv-sizing.max-concurrency", "The 'maximum concurrency' at start-up is the cache's tokens divided by "
              "the context length: how many requests of full length fit at once.", decide_concurrency),
        Claim("kv-sizing.cpu-block-size", "On the CPU build the block size is 128 tokens unless set.",
              decide_block_size),
        Claim("kv-sizing.prefix-caching-default", "Prefix caching is on by default.", decide_prefix_caching),
    ),
    headline=HEADLINE,
)
