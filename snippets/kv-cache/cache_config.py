"""How the running server sized its KV cache: read from its /metrics (vllm:cache_config_info)."""

import os
import re

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def cache_config(server_url: str) -> dict[str, str]:
    """The labels of vllm:cache_config_info: block_size, num_gpu_blocks, enable_prefix_caching, ..."""
    text = httpx.get(server_url + "/metrics", timeout=10).text
    line = next(line for line in text.splitlines() if line.startswith("vllm:cache_config_info{"))
    return dict(re.findall(r'(\w+)="([^"]*)"', line))


if __name__ == "__main__":
    config = cache_config(BASE_URL.removesuffix("/v1"))
    for key in ("block_size", "num_gpu_blocks", "kv_cache_size_tokens", "kv_cache_memory_bytes",
                "kv_cache_max_concurrency", "enable_prefix_caching"):
        print(f"{key:>24}: {config.get(key)}")
