"""Load and unload an adapter while the server runs (vLLM's own endpoints, not OpenAI's).

The server offers them only when started with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in its
environment; otherwise both paths answer 404.
"""

import os
import sys

import httpx

SERVER = os.environ.get("SERVER", "http://localhost:8000")


def load(name: str, path: str) -> httpx.Response:
    """Serve the adapter in folder `path` (on the server's machine) under the model name `name`."""
    return httpx.post(f"{SERVER}/v1/load_lora_adapter", json={"lora_name": name, "lora_path": path}, timeout=120)


def unload(name: str) -> httpx.Response:
    return httpx.post(f"{SERVER}/v1/unload_lora_adapter", json={"lora_name": name}, timeout=120)


if __name__ == "__main__":
    # python runtime.py load NAME PATH | python runtime.py unload NAME
    action, name, *path = sys.argv[1:]
    r = load(name, *path) if action == "load" else unload(name)
    print(r.status_code, r.text)
