"""Time one request streamed and one not: E2E, TTFT and inter-token latency (ITL)."""

import os
import time

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
PROMPT = [{"role": "user", "content": "Explain paged memory briefly."}]


def timed(client: OpenAI, stream: bool, max_tokens: int = 150, **extra) -> dict:
    """E2E for either mode; TTFT, ITL and arrival times only when streaming."""
    t0 = time.perf_counter()
    if not stream:
        client.chat.completions.create(model="chat", messages=PROMPT, max_tokens=max_tokens,
                                       temperature=0.0, extra_body=extra)
        return {"e2e": time.perf_counter() - t0, "ttft": None, "itl": None, "arrivals": []}

    arrivals = []
    response = client.chat.completions.create(model="chat", messages=PROMPT, max_tokens=max_tokens,
                                              temperature=0.0, stream=True, extra_body=extra)
    for chunk in response:
        # The first and last chunks carry no text: only count chunks that do.
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.perf_counter() - t0)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    return {"e2e": time.perf_counter() - t0,
            "ttft": arrivals[0] if arrivals else None,
            "itl": sum(gaps) / len(gaps) if gaps else None,
            "arrivals": arrivals}


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY")
    for stream in (False, True):
        r = timed(client, stream)
        ttft = f"{r['ttft'] * 1000:6.0f} ms" if r["ttft"] is not None else "   n/a   "
        itl = f"{r['itl'] * 1000:5.1f} ms" if r["itl"] is not None else "  n/a"
        print(f"{'streaming' if stream else 'non-streaming':<14} E2E {r['e2e']:5.2f} s  TTFT {ttft}  ITL {itl}")
