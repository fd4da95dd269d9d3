"""Time to first token and inter-token latency for prompts of different lengths."""

import os
import time

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
SENTENCE = "The quick brown fox jumps over the lazy dog near the quiet river bank. "


def prompt_of(sentences: int, tag: str = "") -> list[dict]:
    # A different tag at the start of each prompt keeps the prefix cache from serving a repeat.
    return [{"role": "user", "content": f"[{tag or time.time_ns()}] " + SENTENCE * sentences + "Summarise this."}]


def measure(client: OpenAI, messages: list[dict], max_tokens: int = 32) -> dict:
    """One streamed request: TTFT, mean gap between text chunks, and the prompt's token count."""
    t0 = time.perf_counter()
    stream = client.chat.completions.create(
        model="chat", messages=messages, max_tokens=max_tokens, temperature=0, stream=True,
        stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    arrivals, usage = [], None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.perf_counter() - t0)
    # Time per token after the first, counted in tokens: a chunk can hold no text (part of a character).
    itl = (arrivals[-1] - arrivals[0]) / (usage.completion_tokens - 1)
    return {"prompt_tokens": usage.prompt_tokens, "ttft": arrivals[0], "itl": itl, "chunks": len(arrivals)}


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    for sentences in (1, 8, 32, 64):
        r = measure(client, prompt_of(sentences))
        print(f"{r['prompt_tokens']:5d} prompt tokens: TTFT {r['ttft'] * 1000:6.0f} ms, ITL {r['itl'] * 1000:5.1f} ms")
