"""Send several streaming requests at the same moment and record when each line of each answer arrives."""

import os
import threading
import time

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def send_together(base_url: str, n: int, max_tokens: int = 40) -> list[dict]:
    """n identical streaming requests started together; per request: status and timed lines."""
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story."}],
            "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "ignore_eos": True}  # every answer is exactly max_tokens long
    results = [{} for _ in range(n)]
    t0 = time.perf_counter()

    def one(i):
        lines, status = [], None
        with httpx.Client(timeout=300) as client:
            with client.stream("POST", f"{base_url}/chat/completions", json=body) as r:
                status = r.status_code
                for line in r.iter_lines():
                    lines.append({"t": round(time.perf_counter() - t0, 4), "line": line})
        results[i] = {"status": status, "lines": lines}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


if __name__ == "__main__":
    for i, r in enumerate(send_together(BASE_URL, 3)):
        data = [x["t"] for x in r["lines"] if x["line"].startswith("data: ")]
        print(f"request {i}: HTTP {r['status']}, first event after {data[0]:.2f} s, last after {data[-1]:.2f} s")
