"""KV cache article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

import re
from typing import Callable


def concurrency_not_tokens_over_context(d: dict) -> None:
    """kv-sizing.max-concurrency: the start-up report's 'maximum concurrency' is not the cache's tokens over
    the context length (here: twice that, as if a request took half the context)."""
    d["report"]["lines"] = [re.sub(r"(Maximum concurrency for [\d,]+ tokens per request: )([\d.]+)x",
                                   lambda m: f"{m.group(1)}{float(m.group(2)) * 2:.2f}x", x) for x in d["report"]["lines"]]


def cpu_build_picks_gpu_block_size(d: dict) -> None:
    """kv-sizing.cpu-block-size: with no --block-size flag, the CPU build picks 16-token blocks, as on a GPU."""
    for key in ("block_size", "effective_attention_block_size"):
        if key in d["cache_config"]:
            d["cache_config"][key] = "16"


def hit_recomputes_prefill(d: dict) -> None:
    """prefix-hits.hit-skips-prefill: a hit saves no prefill time: the warm request's TTFT is its cold one's."""
    for pair in d["timed"]:
        pair["warm"]["ttft_s"] = pair["cold"]["ttft_s"]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "kv-sizing.max-concurrency": concurrency_not_tokens_over_context,
    "kv-sizing.cpu-block-size": cpu_build_picks_gpu_block_size,
    "prefix-hits.hit-skips-prefill": hit_recomputes_prefill,
}
