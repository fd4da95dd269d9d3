"""A long prompt arrives while another request is streaming: does the stream stall?"""

import os
import threading
import time

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
SENTENCE = "The quick brown fox jumps over the lazy dog near the quiet river bank. "


def stream_meets_long_prompt(base_url: str, after_s: float = 1.5, sentences: int = 90) -> dict:
    """Stream one answer; after_s into it, send a long prompt. Returns arrival times on one clock."""
    t0 = time.perf_counter()
    lines, long_prompt = [], {}

    def stream():
        body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story."}],
                "max_tokens": 120, "temperature": 0, "stream": True, "ignore_eos": True}
        with httpx.Client(timeout=300) as client:
            with client.stream("POST", f"{base_url}/chat/completions", json=body) as r:
                lines.append({"t": round(time.perf_counter() - t0, 4), "line": f"HTTP {r.status_code}"})
                for line in r.iter_lines():
                    lines.append({"t": round(time.perf_counter() - t0, 4), "line": line})

    streamer = threading.Thread(target=stream)
    streamer.start()
    time.sleep(after_s)
    content = f"[{time.time_ns()}] " + SENTENCE * sentences + "Summarise this."  # unique: no prefix-cache hit
    long_prompt["sent_at"] = round(time.perf_counter() - t0, 4)
    r = httpx.post(f"{base_url}/chat/completions", timeout=300, json={
        "model": "chat", "messages": [{"role": "user", "content": content}], "max_tokens": 1})
    long_prompt.update(done_at=round(time.perf_counter() - t0, 4), status=r.status_code,
                       prompt_tokens=r.json()["usage"]["prompt_tokens"])
    streamer.join()
    return {"stream": lines, "long_prompt": long_prompt}


if __name__ == "__main__":
    result = stream_meets_long_prompt(BASE_URL)
    lp = result["long_prompt"]
    times = [x["t"] for x in result["stream"] if x["line"].startswith("data: ")]
    gaps = [(b - a, a) for a, b in zip(times, times[1:])]
    worst, at = max(gaps)
    print(f"long prompt ({lp['prompt_tokens']} tokens) sent at {lp['sent_at']:.2f} s, answered at {lp['done_at']:.2f} s")
    print(f"largest gap in the stream: {worst * 1000:.0f} ms, starting at {at:.2f} s")
