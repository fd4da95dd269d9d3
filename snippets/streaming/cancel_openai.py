"""Abandon a long streamed generation after a few seconds, with the openai client."""

import os
import time

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
MESSAGES = [{"role": "user", "content": "Write an extremely long essay about memory."}]


def abandon_after(seconds: float, client: OpenAI, max_tokens: int = 1000, **extra) -> float:
    """Read the stream for `seconds`, then close it. Returns the perf_counter time the client let go."""
    stream = client.chat.completions.create(model="chat", messages=MESSAGES, max_tokens=max_tokens,
                                            stream=True, extra_body=extra)
    start = time.perf_counter()
    with stream:  # closing the stream closes the HTTP response
        for _ in stream:
            if time.perf_counter() - start > seconds:
                break
    return time.perf_counter()


if __name__ == "__main__":
    abandon_after(2.0, OpenAI(base_url=BASE_URL, api_key="EMPTY"))
    print("client gone; watch the server's running requests and its log")
