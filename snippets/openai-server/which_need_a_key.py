"""Which endpoints a server started with --api-key protects: each asked without a key, then with it."""

import os

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
API_KEY = os.environ.get("VLLM_API_KEY", "")
ENDPOINTS = [("GET", "/v1/models", None),
             ("POST", "/v1/chat/completions", {"model": "chat", "max_tokens": 1,
                                               "messages": [{"role": "user", "content": "Hi"}]}),
             ("POST", "/v1/completions", {"model": "chat", "max_tokens": 1, "prompt": "Hi"}),
             ("GET", "/health", None), ("GET", "/version", None), ("GET", "/metrics", None),
             ("POST", "/tokenize", {"model": "chat", "prompt": "Hi"}),
             # Outside /v1, and it generates: the SageMaker-style route takes the same chat body.
             ("POST", "/invocations", {"model": "chat", "max_tokens": 1,
                                       "messages": [{"role": "user", "content": "Hi"}]})]


def statuses(base_url: str, api_key: str) -> dict:
    root = base_url.removesuffix("/v1")
    out = {}
    with httpx.Client(timeout=60) as c:
        for method, path, body in ENDPOINTS:
            without = c.request(method, root + path, json=body).status_code
            with_key = c.request(method, root + path, json=body,
                                 headers={"Authorization": f"Bearer {api_key}"}).status_code
            out[f"{method} {path}"] = {"without key": without, "with key": with_key}
    return out


if __name__ == "__main__":
    for endpoint, codes in statuses(BASE_URL, API_KEY).items():
        print(f"{endpoint:<26} without key: HTTP {codes['without key']}   with key: HTTP {codes['with key']}")
