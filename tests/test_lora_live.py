"""The lora variant, started for real: its adapters built, put in by path, served by name; its environment set.

One server start of its own (about 50 s). What the LoRA jobs then measure on it is theirs to record;
this is the machinery under them: placeholders replaced by the cached folders, the recorded command
free of the machine's paths, and VLLM_ALLOW_RUNTIME_LORA_UPDATING reaching the server (the runtime
endpoints exist: an unknown adapter gets the endpoint's own 404, not the router's).
"""

from __future__ import annotations

import httpx
import pytest

from verify.config.adapters import RECIPES
from verify.config.profiles import LORA_ADAPTERS, get_profile

pytestmark = pytest.mark.engine  # starts servers of its own (not the shared one)


def test_the_lora_variant_serves_each_adapter_with_runtime_updating_on():
    from verify.live.server import managed_server
    with managed_server(get_profile("cpu"), variant="lora", progress=lambda m: None) as server:
        models = {m["id"]: m for m in httpx.get(server.api + "/models", timeout=10).json()["data"]}
        for name in LORA_ADAPTERS:
            assert models[name]["parent"] == "chat"
            assert models[name]["root"].endswith(RECIPES[name].folder_name())
        recorded = " ".join(server.argv)
        assert f"attn-a=<adapters>/{RECIPES['attn-a'].folder_name()}" in recorded and "vllm-docs-verify/adapters" not in recorded
        r = httpx.post(server.url + "/v1/unload_lora_adapter", json={"lora_name": "never-loaded"}, timeout=10)
        assert r.status_code == 404 and "cannot be found" in r.json()["error"]["message"]

        def greedy(model):
            return httpx.post(server.api + "/chat/completions", timeout=60, json={
                "model": model, "messages": [{"role": "user", "content": "Name three colours of the rainbow."}],
                "temperature": 0, "max_tokens": 12}).json()["choices"][0]["message"]["content"]
        assert greedy("attn-a") != greedy("chat")
