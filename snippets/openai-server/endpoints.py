"""The server's endpoints beyond chat and completions, and where each lives."""

import os

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def endpoints(base_url: str) -> dict:
    root = base_url.removesuffix("/v1")
    with httpx.Client(timeout=30) as c:
        return {
            "GET /v1/models": c.get(f"{base_url}/models"),
            "GET /health": c.get(f"{root}/health"),
            "GET /version": c.get(f"{root}/version"),
            "GET /metrics": c.get(f"{root}/metrics"),
            "POST /tokenize": c.post(f"{root}/tokenize", json={"model": "chat", "prompt": "Hello world"}),
            "POST /detokenize": c.post(f"{root}/detokenize", json={"model": "chat", "tokens": [19556, 905]}),
            "POST /v1/tokenize": c.post(f"{base_url}/tokenize", json={"model": "chat", "prompt": "Hello world"}),
        }


if __name__ == "__main__":
    for name, r in endpoints(BASE_URL).items():
        print(f"{name:<20} HTTP {r.status_code}  {r.headers.get('content-type', '')[:30]:<30} {r.text[:60]!r}")
