"""What a probe would see right now: is the port open, and what do /health, /v1/models and a
one-token completion answer? Run it in a loop while a server starts, stalls or drains."""

import socket

import httpx


def look(base_url: str, model: str, timeout: float = 2.0) -> dict:
    url = httpx.URL(base_url)
    try:
        socket.create_connection((url.host, url.port), timeout=timeout).close()
    except OSError as e:
        return {"port": type(e).__name__}  # e.g. ConnectionRefusedError: nothing listens yet
    seen = {"port": "open"}
    calls = {
        "health": ("GET", "/health", None),
        "models": ("GET", "/v1/models", None),
        "completion": ("POST", "/v1/completions", {"model": model, "prompt": "Hi", "max_tokens": 1}),
    }
    with httpx.Client(base_url=base_url, timeout=timeout) as client:
        for name, (method, path, body) in calls.items():
            try:
                seen[name] = client.request(method, path, json=body).status_code
            except httpx.HTTPError as e:
                seen[name] = type(e).__name__  # no HTTP answer at all
    return seen


if __name__ == "__main__":
    import sys
    import time

    base_url, model = sys.argv[1], sys.argv[2]  # e.g. http://127.0.0.1:8000 chat
    t0 = time.monotonic()
    while True:
        print(f"{time.monotonic() - t0:6.1f} s  {look(base_url, model)}", flush=True)
        time.sleep(0.5)
