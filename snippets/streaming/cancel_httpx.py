"""Abandon a long streamed generation after a few seconds, with httpx."""

import os
import time

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
BODY = {
    "model": "chat",
    "messages": [{"role": "user", "content": "Write an extremely long essay about memory."}],
    "max_tokens": 1000,
    "stream": True,
}


def abandon_after(seconds: float, base_url: str = BASE_URL, body: dict = BODY, **client_args) -> float:
    """Read the stream for `seconds`, then leave. Returns the perf_counter time the client let go."""
    with httpx.Client(timeout=None, **client_args) as client:
        with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
            start = time.perf_counter()
            for _ in response.iter_lines():
                if time.perf_counter() - start > seconds:
                    break
        # Leaving the `with` block closes the response (and this client's connection).
    return time.perf_counter()


if __name__ == "__main__":
    abandon_after(2.0)
    print("client gone; watch the server's running requests and its log")
