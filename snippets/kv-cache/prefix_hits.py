"""Send the same prompt twice and count how many of its tokens hit the prefix cache."""

import os
import re

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def prefix_counters(server_url: str) -> tuple[float, float]:
    """(tokens looked up, tokens found) in the prefix cache since the server started."""
    text = httpx.get(server_url + "/metrics", timeout=10).text
    def total(name):
        return sum(float(v) for v in re.findall(rf"^{name}{{[^}}]*}} (\S+)$", text, re.M))
    return total("vllm:prefix_cache_queries_total"), total("vllm:prefix_cache_hits_total")


def hits_for(base_url: str, prompt: str, **params) -> float:
    """Tokens of this request that came from the prefix cache (run it alone: the counters are server-wide)."""
    server = base_url.removesuffix("/v1")
    _, before = prefix_counters(server)
    httpx.post(base_url + "/completions", json={"model": "chat", "prompt": prompt, "max_tokens": 1, **params},
               timeout=120).raise_for_status()
    return prefix_counters(server)[1] - before


if __name__ == "__main__":
    prompt = "Summarise the history of the lighthouse. " * 40
    print("first time: ", hits_for(BASE_URL, prompt), "tokens from the cache")
    print("second time:", hits_for(BASE_URL, prompt), "tokens from the cache")
